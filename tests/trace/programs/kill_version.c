/* The kill version (see tests/trace/test_trace_kill_version.py): what a lookup found stays
 * valid while no object is removed or registered over another; what it did not find (a
 * gap) only while nothing is registered.  work() below touches an object, then bytes of an
 * arena before anything is registered there (a gap between objects), registers an object in the arena (the first
 * object stays the fast role; the arena's bytes are found now), forgets it (its bytes are
 * nobody's again), registers an object of another type there, and forgets that one. */
#include <stdio.h>
#include "cachefit.h"
#include "obj.h"

/* x@0 (8), y@8 (8); 16 bytes. */
struct pair {
    long x;
    long y;
};

/* One 256-byte granule: the object worked on at 0, the arena at 64, a guard object at 192
 * (so that the arena lies between registered objects, where gaps are remembered). */
static _Alignas(256) char heap[256];
#define arena (heap + 64)
static volatile long sink;

__attribute__((noinline)) void work(struct obj *pa)
{
    volatile struct obj *x = pa;
    /* The arena's bytes through plain pointers: a cast of the arena to a traced type would
     * make it an object of that type from the start (a carved object, issue 27). */
    volatile int *first = (volatile int *)(void *)arena;
    volatile long *second = (volatile long *)(void *)(arena + 8);
    sink = x->a;                        /* obj (0, 0, 4, r): the fast role */
    sink = *second;                     /* no object there yet: nothing */
    CACHEFIT_OBJECT(arena, struct obj);
    sink = x->b;                        /* obj (0, 8, 8, r): still the fast role */
    sink = *second;                     /* obj (1, 8, 8, r): found now */
    sink = x->c;                        /* obj (0, 16, 1, r) */
    CACHEFIT_FORGET(arena);
    sink = *first;                      /* nobody's again: nothing */
    sink = x->a;                        /* obj (0, 0, 4, r) */
    CACHEFIT_OBJECT(arena, struct pair);
    sink = *second;                     /* pair (0, 8, 8, r) */
    sink = x->b;                        /* obj (0, 8, 8, r) */
    CACHEFIT_FORGET(arena);
    sink = *first;                      /* nothing */
    x->a = 1;                           /* obj (0, 0, 4, w) */
}

int main(void)
{
    struct obj *a = (struct obj *)(void *)heap;
    CACHEFIT_OBJECT(a, struct obj);
    CACHEFIT_OBJECT(heap + 192, struct obj);
    for (int i = 0; i < 3; i++)
        work(a);
    printf("%d\n", a->a);
    return 0;
}
