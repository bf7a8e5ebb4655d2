/* The project's allocators (accept27_mem.h); this unit knows no traced type. */
#include <stdlib.h>
#include "accept27_mem.h"

#define HDR 16

void *xmalloc(size_t n)
{
    char *p = malloc(n + HDR);
    return p ? p + HDR : NULL;
}

void xfree(void *ptr)
{
    char *real;
    if (!ptr)
        return;
    real = (char *)ptr - HDR;
    free(real);
}

void *pool_get(struct pool *p, size_t size)
{
    void *r = p->buf + p->used;
    p->used += (size + 15) & ~(size_t)15;
    return r;
}
