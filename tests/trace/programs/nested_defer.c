/* Nested invocations counted for the outermost summary (see
 * tests/trace/test_trace_nested_defer.py).  outer() is a long invocation (the test sets
 * max_accesses to 4, so it becomes a summary after a few accesses); it calls the entry
 * inner() on its first object many times with two sequences, twice on a second object
 * (another role: renumbered, not deferred), and reads d before and after. */
#include <stdio.h>
#include "cachefit.h"

struct rec {
    int a; /* 0 */
    int b; /* 4 */
    int c; /* 8 */
    int d; /* 12 */
};

static volatile int sink;

__attribute__((noinline)) void inner(struct rec *r, int write)
{
    volatile struct rec *v = r;
    sink = v->a;
    sink = v->b;
    if (write)
        v->c = 1;
}

__attribute__((noinline)) void outer(struct rec *r, struct rec *o)
{
    volatile struct rec *v = r;
    sink = v->d;
    for (int i = 0; i < 6; i++)
        inner(r, i % 2);
    inner(o, 0);
    inner(o, 0);
    for (int i = 0; i < 4; i++)
        inner(r, 1);
    sink = v->d;
}

int main(void)
{
    static struct rec r, o;
    CACHEFIT_OBJECT(&r, struct rec);
    CACHEFIT_OBJECT(&o, struct rec);
    outer(&r, &o);
    outer(&r, &o);
    printf("%d\n", r.c);
    return 0;
}
