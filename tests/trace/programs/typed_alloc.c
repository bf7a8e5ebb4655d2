/* Allocation sites that say what they allocate, with no [trace] allocators (issue 27):
 * a function-pointer allocator behind a macro (zlib's ZALLOC), a `sizeof *p` wrapper
 * with a header in front of each block and its free (Redis's zmalloc/zfree), a macro
 * over a wrapper over that wrapper (Lua's luaM_new over luaM_malloc_), and a pool
 * carving objects from one malloc'd block (pool_get(p, sizeof *c)). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"

typedef void *(*alloc_func)(void *opaque, unsigned items, unsigned size);
typedef void (*free_func)(void *opaque, void *address);

struct stream {
    alloc_func zalloc;
    free_func zfree;
    void *opaque;
    struct obj *state;
};

static void *std_alloc(void *opaque, unsigned items, unsigned size)
{
    (void)opaque;
    return calloc(items, size);
}

static void std_free(void *opaque, void *address)
{
    (void)opaque;
    free(address);
}

#define ZALLOC(strm, items, size) (*((strm)->zalloc))((strm)->opaque, (items), (size))
#define ZFREE(strm, addr) (*((strm)->zfree))((strm)->opaque, (void *)(addr))

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

void *mem_alloc(void *ud, size_t n, int tag)
{
    (void)ud;
    (void)tag;
    return xmalloc(n);
}

#define mem_new(ud, t) ((t *)mem_alloc(ud, sizeof(t), 0))

struct pool {
    char *buf;
    size_t used;
};

void *pool_get(struct pool *p, size_t size)
{
    void *r = p->buf + p->used;
    p->used += (size + 15) & ~(size_t)15;
    return r;
}

__attribute__((noinline)) void set_b(struct obj *x)
{
    x->b = 1; /* (0, 8, 8, w) */
}

__attribute__((noinline)) void set_a(struct obj *x)
{
    x->a = 2; /* (0, 0, 4, w) */
}

__attribute__((noinline)) void set_c(struct obj *x)
{
    x->c = 3; /* (0, 16, 1, w) */
}

__attribute__((noinline)) long get_b(struct obj *x)
{
    return x->b; /* (0, 8, 8, r) */
}

static struct obj *make(void)
{
    struct obj *o = xmalloc(sizeof *o);
    return o;
}

int main(void)
{
    struct stream s = {std_alloc, std_free, NULL, NULL};
    s.state = (struct obj *)ZALLOC(&s, 1, sizeof(struct obj));
    set_b(s.state);

    struct obj *w = make();
    set_a(w);
    size_t n = 3;
    struct obj *v = xmalloc(n * sizeof(v[0]));
    set_a(&v[2]);

    struct obj *m = mem_new(NULL, struct obj);
    set_c(m);

    struct pool pool = {malloc(4096), 0};
    struct obj *c = pool_get(&pool, sizeof *c);
    long sum = get_b(c);

    ZFREE(&s, s.state);
    xfree(w);
    set_b(s.state); /* freed: not traced */
    set_a(w);       /* freed: not traced */
    xfree(v);
    xfree(m);
    free(pool.buf);
    printf("%ld\n", sum + (long)pool.used);
    return 0;
}
