/* Operations at every level (issue 26): entry functions called inside other entry
 * functions' invocations, direct and indirect recursion (tests/trace/test_trace_nested.py). */
#include <stdio.h>
#include "obj.h"

struct obj a, b, c;

__attribute__((noinline)) void inner(struct obj *x, struct obj *y)
{
    x->b = 1;          /* (0, 8, 8, w) */
    long t = y->b;     /* (1, 8, 8, r) */
    y->c = (char)t;    /* (1, 16, 1, w) */
}

/* inner(y, x) renumbers: outer's role 1 is inner's role 0. */
__attribute__((noinline)) void outer(struct obj *x, struct obj *y)
{
    x->a = 1;          /* (0, 0, 4, w) */
    y->a = 2;          /* (1, 0, 4, w) */
    inner(y, x);       /* (1, 8, 8, w) (0, 8, 8, r) (0, 16, 1, w) */
    x->c = 3;          /* (0, 16, 1, w) */
}

/* Direct recursion: one invocation; the inner() at the bottom is one of its own. */
__attribute__((noinline)) void rec(struct obj *x, int n)
{
    x->a = n;          /* (0, 0, 4, w), n + 1 times */
    if (n > 0)
        rec(x, n - 1);
    else
        inner(x, x);   /* (0, 8, 8, w) (0, 8, 8, r) (0, 16, 1, w) */
}

/* Indirect recursion: ping -> pong -> ping -> pong: one ping and one pong invocation. */
void pong(struct obj *x, int n);

__attribute__((noinline)) void ping(struct obj *x, int n)
{
    x->a = n;          /* (0, 0, 4, w) */
    if (n > 0)
        pong(x, n - 1);
}

__attribute__((noinline)) void pong(struct obj *x, int n)
{
    x->b = n;          /* (0, 8, 8, w) */
    if (n > 0)
        ping(x, n - 1);
}

int main(void)
{
    inner(&a, &b);     /* top level: the same sequence as inner inside outer */
    outer(&a, &b);
    outer(&c, &a);
    rec(&c, 2);
    ping(&b, 3);
    printf("%d %ld %d\n", a.a, b.b, (int)c.c);
    return 0;
}
