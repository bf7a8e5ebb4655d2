/* A traced type whose objects cachefit cannot find by itself (issue 27): the pool's size
 * names the type, but the result leaves main as a `void *` and becomes a `struct obj *`
 * only in another function. `cachefit trace` must name the site and the allocators line. */
#include <stddef.h>
#include <stdio.h>
#include "obj.h"

struct pool {
    char buf[4096];
    size_t used;
};
static struct pool P;

void *pool_get(struct pool *p, size_t size)
{
    void *r = p->buf + p->used;
    p->used += (size + 15) & ~(size_t)15;
    return r;
}

__attribute__((noinline)) void op(struct obj *x)
{
    x->b = 1; /* (0, 8, 8, w) */
}
__attribute__((noinline)) static void use(void *mem) { op(mem); }
int main(void)
{
    void *mem = pool_get(&P, sizeof(struct obj)); /* line 28 */
    use(mem);
    printf("%zu\n", P.used);
    return 0;
}
