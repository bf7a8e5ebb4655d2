/* The project's own allocators (issue 27 acceptance): a `sizeof *p` wrapper with a
 * header in front of each block and its free, and a pool carving objects from one
 * malloc'd block. */
#include <stddef.h>

void *xmalloc(size_t n);
void xfree(void *ptr);

struct pool {
    char *buf;
    size_t used;
};

void *pool_get(struct pool *p, size_t size);
