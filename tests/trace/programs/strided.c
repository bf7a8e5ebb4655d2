/* A global array of blocks: the object followed by padding that holds a stack. */
#include <stdio.h>
#include "obj.h"

struct blk {
    struct obj o;
    char stack[40];
};
struct blk blocks[4];

__attribute__((noinline)) void push(struct blk *p, struct blk *q)
{
    p->o.a = 1;       /* (0, 0, 4, w) */
    p->stack[30] = 2; /* padding: counted as outside */
    q->o.b = 3;       /* (1, 8, 8, w) */
    q->stack[0] = 4;  /* padding */
    p->o.c = 5;       /* (0, 16, 1, w) */
}

int main(void)
{
    push(&blocks[1], &blocks[3]);
    push(&blocks[0], &blocks[2]);
    push(&blocks[2], &blocks[2]);
    printf("%d\n", blocks[2].o.a);
    return 0;
}
