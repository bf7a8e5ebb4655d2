/* The public annotations of runtime/include/cachefit.h. */
#include <stdio.h>
#include <stdlib.h>
#include "cachefit.h"
#include "obj.h"

__attribute__((noinline)) void op(struct obj *x)
{
    x->c = 9; /* (0, 16, 1, w) */
}

__attribute__((noinline)) void poke(char *p)
{
    p[100] = 1; /* inside a registered array, between objects */
}

int main(void)
{
    struct obj local = {0};
    CACHEFIT_OBJECT(&local, struct obj);
    op(&local);
    CACHEFIT_FORGET(&local);
    op(&local); /* forgotten: not traced */
    char *pool = aligned_alloc(64, 4 * 128);
    CACHEFIT_ARRAY(pool, struct obj, 4, 128);
    op((struct obj *)(pool + 256));
    poke(pool + 128);
    CACHEFIT_BEGIN();
    ((struct obj *)pool)->a = 4; /* (0, 0, 4, w) in a hand-marked invocation */
    CACHEFIT_END();
    CACHEFIT_FORGET(pool);
    free(pool);
    printf("%d\n", local.c);
    return 0;
}
