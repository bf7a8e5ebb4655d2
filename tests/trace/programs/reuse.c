/* Memory reused by another type, or by no object, between invocations: the runtime's
 * shortcut for the first object of an invocation (the previous invocation's role 0)
 * must not outlive the registration it was resolved from (see test_trace_programs.py). */
#include <stdio.h>
#include "cachefit.h"
#include "obj.h"

/* x@0 (8), y@8 (8), z@16 (4); 24 bytes, like struct obj but another type. */
struct other {
    long x;
    long y;
    int z;
};

struct other keep; /* a global of the second type: its layout is in the debug information */
static _Alignas(64) unsigned char mem[128];

/* The same two accesses whatever the memory holds: (0, 8, 8, r) (0, 16, 4, w). */
__attribute__((noinline)) void touch(unsigned char *p)
{
    long v = *(long *)(p + 8);
    *(int *)(p + 16) = (int)v + 1;
}

int main(void)
{
    CACHEFIT_OBJECT(mem, struct obj);
    for (int i = 0; i < 3; i++)
        touch(mem); /* obj, role 0, three times */
    CACHEFIT_FORGET(mem);
    CACHEFIT_OBJECT(mem, struct other);
    for (int i = 0; i < 2; i++)
        touch(mem); /* the same address, now an other */
    CACHEFIT_FORGET(mem);
    CACHEFIT_OBJECT(mem + 64, struct obj);
    touch(mem); /* no object there any more: nothing recorded */
    touch(mem + 64); /* another obj */
    CACHEFIT_OBJECT(mem, struct obj);
    touch(mem); /* an obj again at the first address */
    printf("%d %ld\n", *(int *)(mem + 16), keep.x);
    return 0;
}
