/* Issue 31: untyped pointers into a traced object that leave their unit. work() passes
   &o->b (a `long *`) and the address of the object as `void *` to functions of
   touch_filter_helpers.c, which never sees `struct obj`: it must still be instrumented. */
#include <stdlib.h>
#include "obj.h"

void add_long(long *p, long v);
char first_byte(const void *p);
long sum_longs(long *const *ps, int n);

__attribute__((noinline)) long work(struct obj *o) {
    long *ps[1] = {&o->b};
    add_long(&o->b, 3);
    return first_byte(o) + sum_longs(ps, 1);
}

int main(void) {
    struct obj *o = malloc(sizeof(struct obj));
    o->a = 1; o->b = 2; o->c = 3;
    long s = 0;
    for (int i = 0; i < 3; i++)
        s += work(o);
    free(o);
    return s == 0;
}
