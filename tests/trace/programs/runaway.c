/* Runaway invocations: too many accesses, too many objects (limits in cachefit.toml). */
#include <stdio.h>
#include "obj.h"

struct obj g;
struct obj arr[10];

__attribute__((noinline)) void spin(struct obj *x, int n)
{
    for (int i = 0; i < n; i++)
        x->a = i;
}

__attribute__((noinline)) void many(struct obj *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i].c = 1;
}

int main(void)
{
    spin(&g, 10);
    spin(&g, 1000);
    spin(&g, 5000);
    many(arr, 3);
    many(arr, 10);
    printf("%d\n", g.a);
    return 0;
}
