/* Counting mode (see tests/trace/test_trace_counting.py): once a long invocation is a
 * summary, the runtime counts the accesses to its fast role in place instead of storing
 * each.  outer() below is such an invocation (max_accesses = 20: a summary after 40
 * accesses) and does, after counting began, what could put the summary's order of first
 * occurrence or its hits wrong: a nested entry touching a field first, another object
 * taking the fast role and giving it back, a new object registered (the registry's
 * version changes), a run of coalesced accesses with a member new to the summary.  It
 * runs twice: the two summaries must be equal (no count left over from the first). */
#include <stdio.h>
#include "cachefit.h"
#include "obj.h"

struct obj a, b, spare;
static volatile long sink;

/* Nested entry: (0, 8, 8, w). */
__attribute__((noinline)) void inner(struct obj *x)
{
    ((volatile struct obj *)x)->b = 7;
}

__attribute__((noinline)) void outer(struct obj *px, struct obj *py, int n)
{
    volatile struct obj *x = px, *y = py;
    for (int i = 0; i < n; i++)
        sink = x->a;            /* (0, 0, 4, r): a summary after 40, counted after 41 */
    inner(px);                  /* (0, 8, 8, w) first, in the nested invocation */
    x->c = 1;                   /* (0, 16, 1, w) */
    sink = y->a;                /* (1, 0, 4, r): y takes the fast role */
    sink = x->a;                /* x takes it back */
    x->pad = 2;                 /* (0, 4, 4, w) after (1, 0, 4, r) */
    CACHEFIT_FORGET(&spare);    /* the registry changes */
    CACHEFIT_OBJECT(&spare, struct obj);
    sink = x->a;
    for (int i = 0; i < 5; i++)
        x->c = (char)i;
    x->a = x->a + 1;            /* a run through x at -O2: (0, 0, 4, r) (0, 0, 4, w) */
    x->b = x->b + 1;            /* (0, 8, 8, r) (0, 8, 8, w) */
}

int main(void)
{
    outer(&a, &b, 45);
    outer(&a, &b, 45);
    printf("%d %ld %d\n", a.a, a.b, a.pad);
    return 0;
}
