/* One invocation with many objects (issue 26, tests/trace/test_trace_many_roles.py): walk()
 * touches the N objects of arr in a scattered order (k * 17 mod N), then again in reverse,
 * then in the first order; with max_objects = 64 the first 64 objects it touches are its
 * roles 0 .. 63 (by first touch) and the last 6 are left out.  Every role is looked up
 * again among many others, and the left-out objects are looked up again and again.
 * touch(), an entry, is called on every tenth object of the reverse walk: its own
 * invocation with one object, whose access also counts for walk() (when walk() holds
 * that object). */
#include <stdio.h>
#include "obj.h"

enum { N = 70 };
struct obj arr[N];

__attribute__((noinline)) void touch(struct obj *x)
{
    x->b = 7;
}

static int at(int k)
{
    return k * 17 % N;
}

__attribute__((noinline)) long walk(void)
{
    long s = 0;
    for (int k = 0; k < N; k++) {
        arr[at(k)].a = k;
        s += arr[at(k)].b;
    }
    for (int k = N - 1; k >= 0; k--) {
        arr[at(k)].c = 1;
        if (k % 10 == 5)
            touch(&arr[at(k)]);
    }
    for (int k = 0; k < N; k++)
        s += arr[at(k)].a;
    return s;
}

int main(void)
{
    long s = walk();
    s += walk();
    printf("%ld\n", s);
    return 0;
}
