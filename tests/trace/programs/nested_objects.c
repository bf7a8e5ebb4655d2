/* An enclosing invocation beyond max_objects (issue 26; tests/trace/test_trace_nested.py):
 * outer() touches 70 objects of arr, and for each calls the entry inner() on a fresh
 * object of fresh.  With max_objects = 64 the outer invocation holds 64 objects after 32
 * iterations (arr[i] and fresh[i] in turn); every inner invocation still has its own
 * object.  wide() (an entry nested in inner() for the last object) touches 3 objects of
 * arr2 itself, beyond what the enclosing invocations hold. */
#include <stdio.h>
#include "obj.h"

enum { N = 70 };
struct obj arr[N], fresh[N], arr2[3];

__attribute__((noinline)) void wide(void)
{
    for (int i = 0; i < 3; i++)
        arr2[i].c = 1;
}

__attribute__((noinline)) void inner(struct obj *x, int last)
{
    x->b = 1;
    if (last)
        wide();
    x->c = 2;
}

__attribute__((noinline)) void outer(void)
{
    for (int i = 0; i < N; i++) {
        arr[i].a = i;
        inner(&fresh[i], i == N - 1);
    }
}

int main(void)
{
    outer();
    inner(&fresh[0], 0);
    printf("%d\n", arr[N - 1].a);
    return 0;
}
