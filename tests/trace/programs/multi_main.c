/* Two translation units compiled and linked in separate steps. */
#include <stdio.h>
#include "obj.h"

struct obj shared;
struct obj *make(void);
void op(struct obj *x);

int main(void)
{
    struct obj *h = make();
    op(&shared);
    op(h);
    op(h);
    printf("%d\n", shared.a + h->a);
    return 0;
}
