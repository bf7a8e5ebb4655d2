/* Issue 27's acceptance program, the program's unit: its `struct rec` (accept27_a.h)
 * allocated through a function pointer stored in a struct (zlib's `strm->zalloc` behind
 * ZALLOC) and through the `xmalloc(sizeof *p)` wrapper (accept27_mem.c); the entry
 * function op_main reads last and writes hits: once on the first object, twice on the
 * second. The library's `struct rec` (accept27_b.h) lives in accept27_lib.c. The output:
 * a line of results, then sizeof and offsetof from each unit. */
#include <stdio.h>
#include <stdlib.h>
#include "accept27_a.h"
#include "accept27_mem.h"

typedef void *(*alloc_func)(void *opaque, unsigned items, unsigned size);
typedef void (*free_func)(void *opaque, void *address);

struct stream {
    alloc_func zalloc;
    free_func zfree;
    void *opaque;
    struct rec *state;
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

long lib_run(void);
void lib_layout(void);

void op_main(struct rec *r)
{
    r->hits = r->last + 1;  /* (0, 64, 8, r), (0, 0, 8, w) */
}

static struct rec *rec_new(long last)
{
    struct rec *r = xmalloc(sizeof *r);
    r->last = last;
    r->next = NULL;
    return r;
}

int main(void)
{
    struct stream s = {std_alloc, std_free, NULL, NULL};
    s.state = (struct rec *)ZALLOC(&s, 1, sizeof(struct rec));
    s.state->last = 10;
    struct rec *x = rec_new(20);
    op_main(s.state);
    op_main(x);
    x->last = x->hits;
    op_main(x);
    long lib = lib_run();
    printf("results %ld %ld %ld\n", s.state->hits, x->hits, lib);
    printf("main %zu %zu %zu %zu %zu\n", sizeof(struct rec), offsetof(struct rec, hits),
           offsetof(struct rec, name), offsetof(struct rec, last), offsetof(struct rec, next));
    lib_layout();
    ZFREE(&s, s.state);
    xfree(x);
    return 0;
}
