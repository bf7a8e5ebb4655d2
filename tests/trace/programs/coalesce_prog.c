/* Runs of accesses through one base pointer (runtime/pass/cf_coalesce.cpp, see
 * tests/trace/test_trace_coalesce.py): fields of one object, elements of an array of
 * objects in one run (one base, four objects), runs cut by a nested entry's call. */
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"

struct obj arr[4];

__attribute__((noinline)) void leaf(struct obj *x)
{
    x->c = 2;
    x->a = 1;
}

__attribute__((noinline)) void fields(struct obj *x)
{
    x->a = x->c + (int)x->b;
    x->b = 5;
}

__attribute__((noinline)) void across(struct obj *v)
{
    v[0].a = v[1].a + v[2].a;
    v[3].b = v[0].b + v[3].c;
}

__attribute__((noinline)) void cut(struct obj *x)
{
    x->a = 1;
    x->b = 2;
    leaf(x);
    x->c = 3;
    x->a = x->a + 4;
}

int main(void)
{
    struct obj *h = malloc(sizeof(struct obj));
    h->a = 0;
    h->b = 1;
    h->c = 2;
    for (int i = 0; i < 3; i++) {
        fields(h);
        fields(&arr[i]);
        across(arr);
        cut(h);
    }
    leaf(&arr[3]);
    printf("%d %ld %d\n", h->a + arr[0].a, arr[3].b, arr[1].c);
    free(h);
    return 0;
}
