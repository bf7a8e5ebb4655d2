/* A traced record holding a traced record (issue 27: an access counts for every object
 * that holds it): struct outer (tag 0, in 8..24, z 24; 32 bytes) holds struct inner (x 0,
 * y 8; 16 bytes).  One outer on the heap (registered by its typed allocation) and one
 * global (from the debug information); an allocation registers a traced record as itself
 * only, so the inner inside each is registered by hand (cachefit.h).  op works on an
 * outer, op_in on the inner inside it. */
#include <stdio.h>
#include <stdlib.h>
#include "cachefit.h"

struct inner {
    long x;
    int y;
};

struct outer {
    int tag;
    struct inner in;
    long z;
};

struct outer g;

void op(struct outer *o)
{
    o->in.x = 1;
    o->z = 2;
    if (o->tag == 7)
        puts("seven");
}

void op_in(struct inner *i)
{
    i->y = 3;
}

int main(void)
{
    struct outer *o = malloc(sizeof *o);
    o->tag = 0;
    cachefit_object(&o->in, sizeof o->in, "inner");
    cachefit_object(&g.in, sizeof g.in, "inner");
    op(o);
    op(o);
    op_in(&o->in);
    op(&g);
    printf("%zu %zu\n", sizeof(struct outer), sizeof(struct inner));
    free(o);
    return 0;
}
