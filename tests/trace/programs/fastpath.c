/* The runtime's per-invocation shortcuts (see tests/trace/test_runtime_fastpath.py): the
 * previous invocation's role 0 is armed as the fast role when an invocation begins, the
 * quads of the fast role are appended by inlined code, and an invocation that touched
 * one object (or two of one type) leaves it (them) armed for the next.  Each phase below would be recorded wrongly
 * if one of those shortcuts outlived the state it was taken from. */
#include <stdio.h>
#include "cachefit.h"
#include "obj.h"

/* x@0 (8), y@8 (8), z@16 (4); 24 bytes, like struct obj but another type. */
struct other {
    long x;
    long y;
    int z;
};

struct obj a, b, e;
struct other o;
static _Alignas(64) unsigned char mem[64];

/* (0, 8, 8, r) (0, 16, 1, w) */
__attribute__((noinline)) void one(struct obj *x)
{
    long t = x->b;
    x->c = (char)t;
}

/* (0, 0, 4, w) (1, 0, 4, w) (0, 8, 8, r) (1, 8, 8, w) */
__attribute__((noinline)) void two(struct obj *x, struct obj *y)
{
    x->a = 1;
    y->a = 2;
    long t = x->b;
    y->b = t;
}

/* Two objects in turn, then a third, within one invocation (volatile: the order of the
 * accesses is kept at -O2):
 * (0, 0, 4, w) (1, 0, 4, w) (0, 8, 8, r) (1, 8, 8, w) (0, 16, 1, r) (1, 16, 1, w)
 * (1, 0, 4, r) (2, 0, 4, w) (0, 8, 8, w) (1, 16, 1, w) (2, 16, 1, w) (0, 0, 4, r) */
__attribute__((noinline)) void turns(struct obj *px, struct obj *py, struct obj *pz)
{
    volatile struct obj *x = px, *y = py, *z = pz;
    x->a = 1;
    y->a = 2;
    long t = x->b;
    y->b = t;
    y->c = x->c;
    z->a = y->a;
    x->b = 5;
    y->c = 3;
    z->c = 4;
    (void)x->a;
}

/* An object of the other type first: other (0, 16, 4, w); obj (0, 0, 4, w). */
__attribute__((noinline)) void mixed(struct other *p, struct obj *x)
{
    p->z = 3;
    x->a = 4;
}

/* n writes of x->a (volatile: kept at -O2): a summary when n exceeds max_accesses. */
__attribute__((noinline)) void spin(struct obj *x, int n)
{
    for (int i = 0; i < n; i++)
        ((volatile struct obj *)x)->a = i;
}

/* The object is forgotten in the middle of the invocation and the memory registered as
 * another type: obj (0, 8, 8, r); other (0, 8, 8, r). */
__attribute__((noinline)) void retype(unsigned char *p)
{
    long v = *(long *)(p + 8);
    CACHEFIT_FORGET(p);
    CACHEFIT_OBJECT(p, struct other);
    v += *(long *)(p + 8);
    *(long *)(p + 32) = v; /* outside both objects (24 bytes): not recorded */
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        one(&a);        /* role 0 armed, then re-armed by each end */
    two(&b, &a);        /* armed a is not the first object: b is role 0, a role 1 */
    for (int i = 0; i < 17; i++)
        one(&a);        /* arming pauses after a miss, then resumes */
    mixed(&o, &a);      /* armed a, but the first access is to another type */
    for (int i = 0; i < 17; i++)
        one(&a);
    spin(&a, 100);      /* armed a, longer than max_accesses (50) on the inlined path */
    one(&a);            /* the limit is back for the next invocation */
    for (int i = 0; i < 10; i++) {
        turns(&a, &b, &e); /* objects in turn inside the invocation, starting on each */
        one(&b);        /* the second fast role (b, role 1) must not outlive turns() */
        turns(&b, &a, &e);
        one(&e);
        turns(&e, &a, &b);
        one(&a);
    }
    for (int i = 0; i < 20; i++) {
        two(&a, &b);    /* invocations starting on a and on b in turn */
        two(&b, &a);
    }
    for (int i = 0; i < 5; i++) {
        /* After a two-object invocation both objects are armed (roles 0 and 1, in the
         * order predicted from the last ones); each must still be numbered by first touch. */
        two(&a, &b);
        one(&b);        /* only the one armed second (or first): role 0 */
        two(&a, &b);
        two(&e, &a);    /* a third object first: e role 0, a role 1 */
        two(&a, &b);
        two(&b, &e);    /* one armed object first, then a third: b 0, e 1 */
        two(&a, &b);
        turns(&a, &e, &b); /* armed a, a third, then the other armed one: 0, 1, 2 */
    }
    CACHEFIT_OBJECT(mem, struct obj);
    for (int i = 0; i < 2; i++) {
        one((struct obj *)mem);
        retype(mem);    /* the fast role's object is forgotten inside the invocation */
        CACHEFIT_FORGET(mem);
        CACHEFIT_OBJECT(mem, struct obj);
    }
    printf("%d %d %d %ld\n", a.a, b.a, o.z, *(long *)(mem + 32));
    return 0;
}
