/* The library's unit: its own `struct dict` (twodefs_b.h), one on the heap and one
 * global, each touched by the entry function op_lib. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "twodefs_b.h"

struct dict lib_global __attribute__((aligned(64))); /* at 0 mod 64 wherever linked */

void op_lib(struct dict *d)
{
    d->privdata = d;
    if (d->size == 7)
        puts("seven");
}

void *lib_new(void)
{
    struct dict *d = malloc(sizeof *d);
    d->size = 1;
    return d;
}

void lib_use(void *p) { op_lib(p); }
void lib_use_global(void) { op_lib(&lib_global); }

void lib_layout(void)
{
    printf("lib %zu %zu %zu %zu %zu\n", sizeof(struct dict), offsetof(struct dict, table),
           offsetof(struct dict, size), offsetof(struct dict, used),
           offsetof(struct dict, privdata));
}
