/* Links the library normally: its constructor runs before the executable's. */
#include <stdio.h>
#include "shlib.h"

/* The entry function: y first (role 0), then x (role 1). */
__attribute__((noinline)) void op(struct obj *x, struct obj *y)
{
    int v = y->a;
    x->b = v;
}

int main(void)
{
    op(&lib_one, lib_slot(2));    /* ((0, 0, 4, r), (1, 8, 8, w)) */
    op(lib_slot(1), lib_slot(1)); /* ((0, 0, 4, r), (0, 8, 8, w)) twice */
    op(lib_slot(3), lib_slot(3));
    for (int i = 0; i < 3; i++)   /* the same three more times: an executable that refers */
        op(&lib_two, &lib_two);   /* to lib_two directly may hold a copy of it */
    lib_op(0);                    /* ((0, 16, 1, r), (1, 16, 1, w)) */
    printf("%ld %ld %ld %ld %d same=%d\n", lib_one.b, lib_two.b, lib_slot(1)->b,
           lib_slot(3)->b, lib_slot(0)->c, lib_one_address() == &lib_one);
    return 0;
}
