/* The other type's role (see tests/trace/test_trace_other_type.py): an invocation that
 * touches objects of two types in turn (an interpreter's state and its current frame)
 * keeps the object of the type that is not the fast role's on the inlined path, with its
 * own position in its type's sequence.  step() below moves that role between objects of
 * one type and between the two types, calls a nested entry, sees the registry change and
 * makes a run of coalesced accesses through it; longstep() fills its type's buffer through
 * it (max_accesses = 64: a summary).  The sequences must be the ones listed in the test. */
#include <stdio.h>
#include "cachefit.h"
#include "obj.h"

/* top@0 (8), base@8 (8), flags@16 (4), pad@20 (4); 24 bytes. */
struct state {
    long top;
    long base;
    int flags;
    int pad;
};

struct state s1, s2;
struct obj o1, o2, spare;
static volatile long sink;

/* Nested entry: obj (0, 8, 8, w). */
__attribute__((noinline)) void inner(struct obj *x)
{
    ((volatile struct obj *)x)->b = 7;
}

__attribute__((noinline)) void step(struct state *pa, struct state *pb, struct obj *px,
                                    struct obj *py)
{
    volatile struct state *a = pa, *b = pb;
    volatile struct obj *x = px, *y = py;
    sink = a->top;              /* state (0, 0, 8, r): the fast role */
    sink = x->a;                /* obj (0, 0, 4, r): x the fast role */
    a->base = 1;                /* state (0, 8, 8, w): a the other type's role */
    for (int i = 0; i < 3; i++) {
        sink = x->b;            /* obj (0, 8, 8, r) */
        sink = a->flags;        /* state (0, 16, 4, r) */
    }
    sink = b->top;              /* state (1, 0, 8, r): b the fast role */
    sink = x->a;                /* obj (0, 0, 4, r): x the other type's role */
    sink = a->base;             /* state (0, 8, 8, r): of the fast role's type */
    sink = y->a;                /* obj (1, 0, 4, r): y the fast role */
    sink = b->base;             /* state (1, 8, 8, r): b the other type's role */
    sink = a->top;              /* state (0, 0, 8, r): a takes it, same position */
    for (int i = 0; i < 2; i++) {
        b->flags = i;           /* state (1, 16, 4, w) */
        a->flags = i;           /* state (0, 16, 4, w) */
        sink = y->b;            /* obj (1, 8, 8, r) */
    }
    inner(px);                  /* obj (0, 8, 8, w), in the nested invocation too */
    sink = a->pad;              /* state (0, 20, 4, r) */
    CACHEFIT_FORGET(&spare);    /* the registry changes */
    CACHEFIT_OBJECT(&spare, struct obj);
    sink = a->pad;              /* state (0, 20, 4, r) */
    sink = y->c;                /* obj (1, 16, 1, r) */
    sink = a->base;             /* state (0, 8, 8, r): a the other type's role again */
    pa->top = pa->top + 1;      /* a run through pa at -O2: (0, 0, 8, r) (0, 0, 8, w) */
    pa->flags = pa->flags + 1;  /* (0, 16, 4, r) (0, 16, 4, w) */
}

__attribute__((noinline)) void longstep(struct state *pa, struct obj *px, int n)
{
    volatile struct state *a = pa;
    volatile struct obj *x = px;
    for (int i = 0; i < n; i++) {
        sink = x->a;            /* obj (0, 0, 4, r) */
        a->top = i;             /* state (0, 0, 8, w) */
        sink = a->flags;        /* state (0, 16, 4, r) */
    }
}

int main(void)
{
    step(&s1, &s2, &o1, &o2);
    step(&s1, &s2, &o1, &o2);
    longstep(&s1, &o1, 100);
    printf("%ld %ld %d %ld\n", s1.top, s1.base, s1.flags, o1.b);
    return 0;
}
