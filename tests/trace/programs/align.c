/* Objects at known base addresses modulo 64, for the raw trace's `align` lines (issue 26,
 * item 5; tests/trace/test_trace_alignment.py, traced with max_accesses = 100). */
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"
#include "cachefit.h"

/* One object. */
__attribute__((noinline)) void one(struct obj *x)
{
    x->a = 1;
}

/* Two objects. */
__attribute__((noinline)) void two(struct obj *x, struct obj *y)
{
    x->a = 2;
    y->b = 2;
}

/* x only when asked: an invocation that touches nothing counts no object. */
__attribute__((noinline)) void maybe(struct obj *x, int touch)
{
    if (touch)
        x->c = 3;
}

/* n rounds on y: longer than max_accesses (100) for n = 200, a summary. */
__attribute__((noinline)) void inner(struct obj *y, int n)
{
    for (int i = 0; i < n; i++)
        y->b = i;
}

/* x first, then y in a nested invocation of inner (y is role 1 of outer, role 0 of inner). */
__attribute__((noinline)) void outer(struct obj *x, struct obj *y, int n)
{
    x->a = 4;
    inner(y, n);
}

/* A nested invocation whose objects are roles 1 and 0 of the enclosing one, in that order. */
__attribute__((noinline)) void pair(struct obj *x, struct obj *y)
{
    x->a = 5;
    y->b = 5;
}

__attribute__((noinline)) void outer2(struct obj *x, struct obj *y)
{
    x->c = 6;
    y->c = 6;
    pair(y, x);
}

int main(void)
{
    char *buf;
    if (posix_memalign((void **)&buf, 64, 512))
        return 1;
    struct obj *a = (struct obj *)buf;              /* 0 mod 64 */
    struct obj *b = (struct obj *)(buf + 64 + 16);  /* 16 */
    struct obj *c = (struct obj *)(buf + 128 + 48); /* 48 */
    struct obj *d = (struct obj *)(buf + 192 + 8);  /* 8 */
    CACHEFIT_OBJECT(a, struct obj);
    CACHEFIT_OBJECT(b, struct obj);
    CACHEFIT_OBJECT(c, struct obj);
    CACHEFIT_OBJECT(d, struct obj);
    struct obj *e = aligned_alloc(64, sizeof(struct obj)); /* 0: a typed allocation */
    for (int i = 0; i < 3; i++)
        one(b);          /* 16: 3 */
    one(c);
    one(c);              /* 48: 2 */
    one(a);              /* 0: 1 */
    two(a, c);           /* 0: 1, 48: 1 */
    maybe(b, 0);         /* nothing */
    maybe(b, 1);         /* 16: 1 */
    outer(d, b, 200);    /* outer: 8: 1, 16: 1; inner (a summary): 16: 1 */
    outer2(d, b);        /* outer2: 8: 1, 16: 1; pair: 16: 1, 8: 1 */
    outer(d, b, 2);      /* outer: 8: 1, 16: 1; inner: 16: 1 */
    inner(a, 1);         /* 0: 1 */
    one(e);              /* 0: 1 */
    printf("%d %ld %d\n", a->a, b->b, c->a);
    free(e);
    free(buf);
    return 0;
}
