/* Invocations longer than max_accesses become summaries (issue 26;
 * tests/trace/test_trace_summaries.py, traced with max_accesses = 100, max_objects = 4,
 * max_distinct = 3). */
#include <stdio.h>
#include "obj.h"

struct obj g, h;
struct obj arr[6];

/* 2n + 1 accesses: (0, 0, 4, r) (0, 8, 8, w) n times, then (1, 16, 1, w). */
__attribute__((noinline)) void scan(struct obj *x, struct obj *y, int n)
{
    for (int i = 0; i < n; i++) {
        long t = x->a;
        x->b = t + i;
    }
    y->c = 1;
}

/* A short invocation nested in a long one stays a literal sequence of its own. */
__attribute__((noinline)) void poke(struct obj *x)
{
    x->a = 9;          /* (0, 0, 4, w) */
}

__attribute__((noinline)) void driver(struct obj *x, struct obj *y, int n)
{
    for (int i = 0; i < n; i++) {
        x->b = i;      /* (0, 8, 8, w) */
        poke(y);       /* (1, 0, 4, w) */
    }
}

/* One access to each of n objects, then one to the first again. */
__attribute__((noinline)) void many(struct obj *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i].c = 1;
    v[0].a = 2;
}

/* Four distinct accesses per round: more than max_distinct = 3. */
__attribute__((noinline)) void wide(struct obj *x, int n)
{
    for (int i = 0; i < n; i++) {
        x->a = i;      /* (0, 0, 4, w) */
        x->b = i;      /* (0, 8, 8, w) */
        x->c = 1;      /* (0, 16, 1, w) */
        x->pad = i;    /* (0, 4, 4, w): beyond max_distinct */
    }
}

int main(void)
{
    scan(&g, &h, 10);      /* 21 accesses: literal */
    scan(&g, &h, 60);      /* 121: a summary */
    scan(&h, &g, 60);      /* the same summary: count 2 */
    scan(&g, &h, 500);     /* 1001 accesses, the buffer compacted several times */
    driver(&g, &h, 300);   /* 600 accesses; 300 poke invocations inside it */
    many(arr, 6);          /* 7 accesses to 6 objects; max_objects 4 */
    wide(&g, 40);          /* 160 accesses, 4 distinct */
    printf("%d %ld %d\n", g.a, h.b, (int)arr[0].c);
    return 0;
}
