/* Runs of accesses on an object that is not the fast role (see
 * tests/trace/test_trace_coalesce.py): the runtime appends such a run's quads at once when
 * its extent lies in one of the invocation's first roles, through the fast role's position
 * when the role has its type, else through its own type's buffer. */
#include <stdio.h>
#include "obj.h"

/* x@0 (8), y@8 (8), z@16 (4): another traced type. */
struct other {
    long x;
    long y;
    int z;
};

struct obj o1, o2;
struct other p1;

__attribute__((noinline)) void mix(struct obj *a, struct obj *b, struct other *p)
{
    a->c = 1;                   /* a: role 0 of obj, the fast role */
    p->z = 2;                   /* p: role 0 of other, the fast role now */
    a->a = a->c + (int)a->b;    /* a run on a: another type's role */
    b->c = 3;                   /* b: role 1 of obj, the fast role */
    a->b = a->a + a->c;         /* a run on a: the fast role's type, not the fast role */
    p->x = p->y + p->z;         /* a run on p */
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        mix(&o1, &o2, &p1);
    printf("%d %ld %ld\n", o1.a, o1.b, p1.x);
    return 0;
}
