/* Struct assignments and copy-initialisations in instrumented code (see
 * test_trace_memops.py): the clang backend notes each traced copy as a read of the
 * source then a write of the destination, 24 bytes each. */
#include <stdio.h>
#include "obj.h"

struct obj g[4];
static struct obj spare;

__attribute__((noinline)) static struct obj make(long b)
{
    struct obj o = {1, 0, b, 'm'};
    return o;
}

/* Assignment through pointers: (0, 0, 24, r) (1, 0, 24, w) (1, 16, 1, w). */
__attribute__((noinline)) void assign(struct obj *dst, const struct obj *src)
{
    *dst = *src;
    dst->c = 'a';
}

/* Array elements and a local initialised from an object: the local is no object. */
__attribute__((noinline)) long elems(int i, int j)
{
    g[i] = g[j];                     /* (0, 0, 24, r) (1, 0, 24, w) */
    struct obj x = g[i];             /* (1, 0, 24, r) */
    x.b += 1;
    spare = x;                       /* spare is no object: nothing */
    return x.b;
}

/* Forms left unseen: a call's result and operands with side effects. */
__attribute__((noinline)) void unseen(struct obj *dst, const struct obj *src, int n)
{
    *dst = make(n);                  /* not an lvalue */
    const struct obj *p = src;
    dst[1] = *p++;                   /* side effect */
    dst[2] = dst[3] = *p;            /* the inner copy is seen, the outer is not */
}

int main(void)
{
    for (int i = 0; i < 4; i++) {
        g[i].a = i;
        g[i].b = 10 * i;
        g[i].c = (char)('w' + i);
    }
    assign(&g[0], &g[1]);
    assign(&g[0], &g[1]);
    long s = elems(2, 3);
    unseen(&g[0], &g[1], 5);
    for (int i = 0; i < 4; i++)
        printf("%d %ld %c\n", g[i].a, g[i].b, g[i].c);
    printf("%ld %ld\n", s, spare.b);
    return 0;
}
