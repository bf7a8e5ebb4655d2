/* Entry functions nested deeper than the runtime's frames (issue 26;
 * tests/trace/test_trace_nested.py): e1 calls e2 ... calls e9, each writing one field. */
#include <stdio.h>
#include "obj.h"

struct obj g;

#define E(n, next)                                                                       \
    __attribute__((noinline)) void e##n(struct obj *x)                                   \
    {                                                                                    \
        x->a = n;                                                                        \
        next;                                                                            \
    }

E(9, (void)0)
E(8, e9(x))
E(7, e8(x))
E(6, e7(x))
E(5, e6(x))
E(4, e5(x))
E(3, e4(x))
E(2, e3(x))
E(1, e2(x))

int main(void)
{
    e1(&g);
    e9(&g);
    printf("%d\n", g.a);
    return 0;
}
