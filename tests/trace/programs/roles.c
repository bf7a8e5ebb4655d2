/* Roles, counts, nesting and accesses outside invocations (see test_programs.py). */
#include <stdio.h>
#include "obj.h"

struct obj g1, g2;
struct obj arr[3];

__attribute__((noinline)) void op(struct obj *x, struct obj *y)
{
    long t = x->b;   /* (0, 8, 8, r) */
    y->a = (int)t;   /* (1, 0, 4, w) */
    x->c = 1;        /* (0, 16, 1, w) */
}

__attribute__((noinline)) void helper(struct obj *x)
{
    x->b = 7;
}

/* An entry function calling another entry function: one invocation. */
__attribute__((noinline)) void outer(struct obj *x, struct obj *y)
{
    x->a = 3;        /* (0, 0, 4, w) */
    helper(x);       /* (0, 8, 8, w) */
    op(y, x);        /* (1, 8, 8, r) (0, 0, 4, w) (1, 16, 1, w) */
}

int main(void)
{
    g1.a = 5;        /* outside any invocation */
    helper(&g1);
    for (int i = 0; i < 3; i++)
        op(&g1, &g2);
    for (int i = 0; i < 2; i++)
        op(&g2, &g1);
    op(&g1, &g1);
    op(&arr[0], &arr[2]);
    outer(&arr[1], &g1);
    printf("%d\n", g1.a + g2.a + arr[2].a);
    return 0;
}
