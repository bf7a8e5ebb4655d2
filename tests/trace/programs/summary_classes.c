/* Summaries by field footprint (see tests/trace/test_trace_summary_classes.py).  Each call
 * of op() is a long invocation (the test sets max_accesses to 4), so each is a summary;
 * the calls touch:
 *   op(r, 0): arr[1], a, arr[2], arr[3], arr[4] (reads)      fields {a, arr} read
 *   op(r, 1): a, arr[9], arr[10], arr[11], arr[12] (reads)   the same fields, other bytes
 *   op(r, 2): arr[1], a, arr[2], arr[3], arr[4], then b = 1  b written as well
 *   op(r, 3): c and the 3 bytes of padding after it, a       bytes in no field
 *   op(r, 4): c and 1 byte of padding, a                     other bytes in no field
 * and, with a second object, op2(r, s): r->a, s->a, r->arr[0..2] (reads), then r->a,
 * r->arr[5..7] (role 0 twice: one footprint). */
#include <stdio.h>
#include <string.h>
#include "cachefit.h"

struct rec {
    int a;        /* 0 */
    int arr[16];  /* 4 .. 68 */
    char c;       /* 68, then 3 bytes of padding */
    int b;        /* 72 */
};

static volatile int sink;

__attribute__((noinline)) void op(struct rec *r, int k)
{
    volatile struct rec *v = r;
    if (k == 0 || k == 2) {
        sink = v->arr[1];
        sink = v->a;
        sink = v->arr[2];
        sink = v->arr[3];
        sink = v->arr[4];
    }
    if (k == 1) {
        sink = v->a;
        for (int i = 9; i <= 12; i++)
            sink = v->arr[i];
    }
    if (k == 2)
        v->b = 1;
    if (k >= 3) { /* c and padding: a 4-byte (k 3) or 2-byte (k 4) read at offset 68 */
        unsigned int word = 0;
        size_t n = k == 3 ? 4 : 2;
        memcpy(&word, (char *)r + 68, n);
        memcpy(&word, (char *)r + 68, n);
        sink = (int)word;
        sink = v->a;
        sink = v->a;
        sink = v->a;
    }
}

__attribute__((noinline)) void op2(struct rec *r, struct rec *s, int k)
{
    volatile struct rec *x = r, *y = s;
    sink = x->a;
    sink = y->a;
    for (int i = 0; i < 3; i++)
        sink = x->arr[i + 5 * k];
}

int main(void)
{
    static struct rec r, s;
    CACHEFIT_OBJECT(&r, struct rec);
    CACHEFIT_OBJECT(&s, struct rec);
    for (int k = 0; k < 5; k++)
        op(&r, k);
    op2(&r, &s, 0);
    op2(&r, &s, 1);
    printf("%d\n", r.b);
    return 0;
}
