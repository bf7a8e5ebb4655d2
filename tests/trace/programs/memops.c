/* memcpy, memmove and memset in instrumented code (see test_trace_memops.py). */
#include <stdio.h>
#include <string.h>
#include "obj.h"

struct obj g1, g2;
struct obj arr[3];
static char buf[64];

/* Field copies through the C library and a builtin; src is touched first (role 0). */
__attribute__((noinline)) void copy(struct obj *dst, const struct obj *src)
{
    memcpy(&dst->b, &src->b, 9);     /* (0, 8, 9, r) (1, 8, 9, w): b and c */
    __builtin_memset(&dst->a, 0, 4); /* (1, 0, 4, w) */
    memmove(buf, &src->a, 4);        /* (0, 0, 4, r); buf holds no object */
}

/* One fill across two array elements: one access per element. */
__attribute__((noinline)) void clear(struct obj *a)
{
    memset(a, 0, 2 * sizeof *a);     /* (0, 0, 24, w) (1, 0, 24, w) */
}

/* A whole-struct assignment: clang lowers it to llvm.memcpy, which sanitizer coverage
 * does not see; gcc's thread sanitizer reports it as a read and a write range. */
__attribute__((noinline)) void assign(struct obj *dst, const struct obj *src)
{
    *dst = *src;
    dst->c = 2;
}

int main(void)
{
    g2.b = 7;
    memcpy(&g1, &g2, sizeof g1);     /* outside any invocation */
    for (int i = 0; i < 2; i++)
        copy(&g1, &g2);
    clear(&arr[0]);
    clear(&arr[1]);
    assign(&g1, &g2);
    printf("%ld %s\n", g1.b + arr[2].b, buf);
    return 0;
}
