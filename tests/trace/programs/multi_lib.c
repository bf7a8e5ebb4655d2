#include <stdlib.h>
#include "obj.h"

struct obj *make(void)
{
    return calloc(1, sizeof(struct obj));
}

__attribute__((noinline)) void op(struct obj *x)
{
    x->a = x->a + 1; /* (0, 0, 4, r) (0, 0, 4, w) */
}
