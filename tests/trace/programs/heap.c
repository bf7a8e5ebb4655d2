/* Heap objects: registration at malloc/calloc/realloc, forgetting at free, address reuse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "obj.h"

struct other {
    long x, y, z; /* as large as struct obj, so malloc hands out the same chunk */
};

__attribute__((noinline)) void bump(struct obj *p)
{
    p->b = p->b + 1; /* (0, 8, 8, r) (0, 8, 8, w) */
}

__attribute__((noinline)) long peek(struct other *o)
{
    return o->y;
}

__attribute__((noinline)) void pair(struct obj *v, int i, int j)
{
    v[i].c = 1;
    v[j].a = 2;
}

int main(void)
{
    struct obj *p = malloc(sizeof(struct obj));
    memset(p, 0, sizeof *p);
    bump(p);
    void *first = p;
    free(p);
    struct obj *q = malloc(sizeof *q);
    int reused1 = (void *)q == first;
    q->b = 0;
    bump(q);
    bump(q);
    free(q);
    struct other *o = malloc(sizeof(struct other));
    int reused2 = (void *)o == first;
    o->y = 1;
    long s = peek(o); /* the freed obj's memory, now another type: not traced */
    free(o);
    struct obj *v = calloc(3, sizeof(struct obj));
    pair(v, 0, 2);    /* (0, 16, 1, w) (1, 0, 4, w) */
    pair(v, 2, 2);    /* (0, 16, 1, w) (0, 0, 4, w) */
    v = realloc(v, 4 * sizeof(struct obj));
    pair(v, 3, 1);    /* like the first */
    free(v);
    printf("reused %d %d %ld\n", reused1, reused2, s);
    return 0;
}
