/* A pool that carves objects at different offsets of one buffer over time (issue 27):
 * each carve is a typed allocation site (`pool_get(p, sizeof *x)`), never freed; the
 * objects registered before that overlap the new one are stale and must not take its
 * accesses. Traced types obj (obj.h) and other. */
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"

/* x@0 (8), y@8 (8), z@16 (4); 24 bytes, like struct obj but another type. */
struct other {
    long x;
    long y;
    int z;
};

struct pool {
    char *buf;
    size_t used;
};
static struct pool P;

void *pool_get(struct pool *p, size_t size)
{
    void *r = p->buf + p->used;
    p->used += size;
    return r;
}

__attribute__((noinline)) void op(struct obj *x)
{
    x->b = 1; /* (0, 8, 8, w) */
}

__attribute__((noinline)) void op_other(struct other *o)
{
    o->y = 2; /* (0, 8, 8, w) */
}

int main(void)
{
    P.buf = aligned_alloc(256, 1024);
    struct obj *a = pool_get(&P, sizeof *a); /* [0, 24) */
    op(a);
    P.used = 8;
    struct obj *b = pool_get(&P, sizeof *b); /* [8, 32): a is stale */
    op(b);                                   /* writes at 16, inside a */
    P.used = 0;
    struct obj *arr = pool_get(&P, 3 * sizeof *arr); /* [0, 72), b is stale */
    op(&arr[1]);
    P.used = 40;
    struct obj *c = pool_get(&P, sizeof *c); /* [40, 64), off arr's grid: arr is stale */
    op(c);                                   /* writes at 48, arr[2]'s start */
    P.used = 32;
    struct other *o = pool_get(&P, sizeof *o); /* [32, 56), another type: c is stale */
    op_other(o);                               /* writes at 40, c's start */
    printf("%ld %ld\n", c->b, o->y);
    return 0;
}
