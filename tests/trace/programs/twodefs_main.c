/* The program's unit: its own `struct dict` (twodefs_a.h) on the heap, touched by the
 * entry function op_main; the library's dict is used through twodefs_lib.c. */
#include <stdio.h>
#include <stdlib.h>
#include "twodefs_a.h"

void *lib_new(void);
void lib_use(void *p);
void lib_use_global(void);
void lib_layout(void);

void op_main(struct dict *d)
{
    d->used = 1;
    if (d->rehashidx == 5)
        puts("five");
}

static struct dict *dict_new(void)
{
    struct dict *d = calloc(1, sizeof(struct dict));
    return d;
}

int main(void)
{
    struct dict *d = dict_new();
    void *h = lib_new();
    for (int i = 0; i < 3; i++)
        op_main(d);
    lib_use(h);
    lib_use(h);
    lib_use_global();
    printf("main %zu %zu %zu %zu %zu\n", sizeof(struct dict), offsetof(struct dict, type),
           offsetof(struct dict, used), offsetof(struct dict, rehashidx),
           offsetof(struct dict, name));
    lib_layout();
    free(d);
    free(h);
    return 0;
}
