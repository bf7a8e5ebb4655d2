/* The registry's shadow (see tests/trace/test_trace_shadow.py): one byte per 16-byte
 * granule counting the registered objects that meet it, so that the per-access paths drop
 * an access starting in an empty granule without looking in the registry.  Each phase
 * below touches bytes next to objects, in granules an object shares with other bytes,
 * after an object is forgotten and registered again, after more than 255 objects met one
 * granule, in a large array (the registry's sorted table) and after an object too large
 * for the shadow turned it off.  Every invocation of touch() reads x->b, writes x->c and
 * reads the byte at p; the profile must be the same with the shadow and without
 * (CACHEFIT_SHADOW=0).  The program prints the shadow's bytes it expects to see. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include "cachefit.h"
#include "obj.h"

extern unsigned char *__cachefit_shadow;

static _Alignas(256) unsigned char arena[2048];
struct obj big[5000]; /* 120,000 bytes: the registry's table of large objects */
static volatile unsigned char sink;

__attribute__((noinline)) void touch(struct obj *x, unsigned char *p)
{
    long t = x->b;
    x->c = (char)t;
    sink = *p;
}

/* The shadow's byte for address p, or -1 when there is no shadow. */
static int shade(const void *p)
{
    const unsigned char *sh = __cachefit_shadow;
    return sh ? sh[(uintptr_t)p >> 4] : -1;
}

int main(void)
{
    struct obj *x = (struct obj *)(arena + 40); /* [40, 64): granules 2 and 3 */
    CACHEFIT_OBJECT(x, struct obj);
    printf("A %d %d %d %d\n", shade(arena + 32), shade(arena + 48), shade(arena + 64),
           shade(arena + 16));
    touch(x, arena + 32); /* in granule 2, before the object: not recorded */
    touch(x, arena + 64); /* just after it, in an empty granule */
    touch(x, arena + 63); /* its last byte: (0, 23, 1, r) */

    CACHEFIT_FORGET(x);
    printf("B %d %d\n", shade(arena + 40), shade(arena + 48));
    touch(x, arena + 40); /* no object any more: nothing recorded */

    CACHEFIT_OBJECT(x, struct obj);
    printf("C %d\n", shade(arena + 40));
    touch(x, arena + 40); /* (0, 0, 1, r) */

    /* 300 objects of 400 bytes from arena + 512 on, one byte apart: the granule at
     * arena + 800 is met by all of them (its byte stays 255 for good), then all but the
     * last, y = [811, 1211), are forgotten. */
    for (int i = 0; i < 300; i++)
        cachefit_object(arena + 512 + i, 400, "obj");
    printf("D %d %d\n", shade(arena + 800), shade(arena + 512));
    for (int i = 0; i < 299; i++)
        cachefit_forget(arena + 512 + i);
    struct obj *y = (struct obj *)(arena + 512 + 299);
    printf("E %d %d %d\n", shade(arena + 800), shade(arena + 512), shade(arena + 1200));
    touch(y, arena + 805); /* a granule at 255, but in no object any more */
    touch(y, arena + 811); /* y's first byte: (0, 0, 1, r) */

    printf("F %d\n", shade(&big[4000]));
    touch(&big[4000], (unsigned char *)&big[10]); /* two elements: (1, 0, 1, r) */
    CACHEFIT_FORGET(big);
    printf("G %d\n", shade(&big[4000]));
    touch(&big[4000], (unsigned char *)&big[10]); /* nothing */

    /* An array of 2 GiB (address space only): the shadow cannot count it and is turned
     * off for good; the registry goes on alone. */
    size_t len = (size_t)2 << 30;
    unsigned char *huge = mmap(NULL, len, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (huge == MAP_FAILED)
        return 1;
    CACHEFIT_ARRAY(huge, struct obj, len / sizeof(struct obj), sizeof(struct obj));
    printf("H %d\n", shade(arena + 40));
    touch(x, arena + 32);                           /* as in A */
    touch((struct obj *)huge + 5, huge);            /* (1, 0, 1, r): element 0 */
    touch((struct obj *)huge + 5, (unsigned char *)((struct obj *)huge + 5) + 8);
    return 0;
}
