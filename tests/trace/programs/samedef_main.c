/* The unit with the small `struct rec` (samedef_rec.h); op_main reads b and writes a. */
#include <stdio.h>
#include <stdlib.h>
#include "samedef_rec.h"

long lib_run(void);
void lib_layout(void);

void op_main(struct rec *r)
{
    r->a = r->b + 1;    /* (0, 8, 8, r), (0, 0, 8, w) */
}

int main(void)
{
    struct rec *r = malloc(sizeof *r);
    r->b = 1;
    op_main(r);
    op_main(r);
    long lib = lib_run();
    printf("results %ld %ld\n", r->a, lib);
    printf("main %zu %zu %zu\n", sizeof(struct rec), offsetof(struct rec, a),
           offsetof(struct rec, b));
    lib_layout();
    free(r);
    return 0;
}
