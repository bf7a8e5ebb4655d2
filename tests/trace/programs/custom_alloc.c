/* A project allocator named in cachefit.toml ([trace] allocators / deallocators). */
#include <stdio.h>
#include "obj.h"

struct pool {
    char buf[4096];
    unsigned long used;
};
struct pool P;

void *pool_get(struct pool *p, unsigned long size)
{
    void *r = p->buf + p->used;
    p->used += (size + 15) & ~15ul;
    return r;
}

void pool_put(struct pool *p, void *ptr)
{
    (void)p;
    (void)ptr;
}

__attribute__((noinline)) void op(struct obj *x)
{
    x->b = 1; /* (0, 8, 8, w) */
}

int main(void)
{
    unsigned long n = 2;
    struct obj *x = pool_get(&P, sizeof(struct obj));
    struct obj *v = pool_get(&P, n * sizeof(struct obj));
    op(x);
    op(&v[1]);
    pool_put(&P, x);
    op(x); /* released: not traced */
    printf("%lu\n", P.used);
    return 0;
}
