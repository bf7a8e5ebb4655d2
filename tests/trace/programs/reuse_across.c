/* A block of another type carved across the elements of a registered array (see
 * tests/trace/test_trace_reuse_across.py): the array was given back to its pool without
 * cachefit seeing it (as SQLite's lookaside takes its Mem arrays back), and its memory
 * handed out again.  An object is carved out of one object, so an array whose elements
 * the new block crosses is stale: it is forgotten, and the new object's accesses count
 * for it alone (not for both, as for an object nested in its container). */
#include <stddef.h>
#include <stdio.h>
#include "obj.h"

/* 64 bytes: w[0]@0 .. w[7]@56. */
struct wide {
    long w[8];
};

static _Alignas(64) char pool[256];
static volatile long sink;

/* The pool hands out its memory at `off` (a typed allocation site when the result is
 * assigned to a pointer to the type of its sizeof). */
__attribute__((noinline)) void *pool_get(size_t off, size_t n)
{
    return n <= sizeof pool - off ? pool + off : NULL;
}

/* Gives a block back to the pool (a deallocator, when cachefit.toml names it). */
__attribute__((noinline)) void pool_put(void *p)
{
    sink = (long)p;
}

__attribute__((noinline)) void use_array(struct obj *arr)
{
    volatile struct obj *v = arr;
    sink = v[1].b;              /* obj (0, 8, 8, r) */
    sink = v[3].a;              /* obj (1, 0, 4, r) */
}

__attribute__((noinline)) void use_wide(struct wide *w, struct obj *arr)
{
    volatile struct wide *v = w;
    volatile struct obj *old = arr;
    sink = v->w[0];             /* wide (0, 0, 8, r) */
    sink = v->w[5];             /* wide (0, 40, 8, r) */
    sink = old[3].a;            /* the old array's, outside the block: nobody's */
}

int main(void)
{
    struct obj *arr = pool_get(0, 4 * sizeof(struct obj)); /* 4 elements of 24 bytes */
    use_array(arr);
#ifdef GIVE_BACK
    pool_put(arr); /* given back, seen when pool_put is a deallocator */
#endif
    /* given back to the pool (unseen without GIVE_BACK), handed out again across
     * elements 0 to 3 */
    struct wide *w = pool_get(8, sizeof(struct wide));
    use_wide(w, arr);
    /* carved again where it was, with its type: not reused memory */
    w = pool_get(8, sizeof(struct wide));
    use_wide(w, arr);
    printf("%d\n", w != NULL);
    return 0;
}
