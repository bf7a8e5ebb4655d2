/* Issue 27's acceptance program, the library's unit: its own `struct rec`
 * (accept27_b.h), three objects carved by `pool_get(p, sizeof *c)` from one malloc'd
 * block (accept27_mem.c); the entry function op_lib reads len and writes cap: on each
 * object once, on the first twice. */
#include <stdio.h>
#include <stdlib.h>
#include "accept27_b.h"
#include "accept27_mem.h"

void op_lib(struct rec *c)
{
    c->cap = c->len * 2;    /* (0, 0, 8, r), (0, 88, 8, w) */
}

long lib_run(void)
{
    struct pool pool = {malloc(4096), 0};
    struct rec *c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = pool_get(&pool, sizeof *c[i]);
        c[i]->len = (unsigned long)i + 1;
        c[i]->buf = NULL;
    }
    for (int i = 0; i < 3; i++)
        op_lib(c[i]);
    c[0]->len = c[0]->cap;
    op_lib(c[0]);
    long sum = (long)(c[0]->cap + c[1]->cap + c[2]->cap + pool.used);
    free(pool.buf);
    return sum;
}

void lib_layout(void)
{
    printf("lib %zu %zu %zu %zu %zu\n", sizeof(struct rec), offsetof(struct rec, len),
           offsetof(struct rec, tag), offsetof(struct rec, buf), offsetof(struct rec, cap));
}
