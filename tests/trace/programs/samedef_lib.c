/* The unit with the big `struct rec` (samedef_rec.h with REC_BIG); op_lib reads b and
 * writes a, 72 bytes apart. */
#define REC_BIG
#include <stdio.h>
#include <stdlib.h>
#include "samedef_rec.h"

void op_lib(struct rec *r)
{
    r->a = r->b + 1;    /* (0, 72, 8, r), (0, 0, 8, w) */
}

long lib_run(void)
{
    struct rec *r = malloc(sizeof *r);
    r->b = 5;
    op_lib(r);
    op_lib(r);
    op_lib(r);
    long a = r->a;
    free(r);
    return a;
}

void lib_layout(void)
{
    printf("lib %zu %zu %zu %zu\n", sizeof(struct rec), offsetof(struct rec, a),
           offsetof(struct rec, pad), offsetof(struct rec, b));
}
