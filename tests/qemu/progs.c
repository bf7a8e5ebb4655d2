/* Small programs for the QEMU plugin tests: built with plain gcc -O0 -g, no instrumentation.
 * argv[1] picks the scenario. At -O0 every member access is one load or store. */
#include <stdlib.h>

struct obj {           /* 64 bytes */
    long a;            /* 0 */
    int b;             /* 8 */
    int c;             /* 12 */
    char pad[40];      /* 16 */
    long d;            /* 56 */
};

struct obj x, y, z;
struct obj table[4];                                  /* an array of the type: an area */
char arena[4][256] __attribute__((aligned(256)));    /* blocks of 256 bytes, an obj at each start */
#define BLOCK(i) ((struct obj *)arena[i])

/* the entry function: one call -> return is one invocation */
__attribute__((noinline)) void op(struct obj *p, struct obj *q)
{
    p->a = 1;
    q->b = p->b + 2;
    q->d = 3;
}

/* writes beyond the object, into the rest of its 256-byte block */
__attribute__((noinline)) void op_block(struct obj *p, struct obj *q)
{
    q->c = 5;
    p->d = 4;
    ((char *)q)[128] = 7;
}

__attribute__((noinline)) void many(struct obj *p, int n)
{
    for (int i = 0; i < n; i++)
        p->c = i;
}

__attribute__((noinline)) void rec(struct obj *p, int n)
{
    p->c = n;
    if (n > 0)
        rec(p, n - 1);
    p->d = n;
}

__attribute__((noinline)) void phase_begin(void) {}
__attribute__((noinline)) void phase_done(void) {}

int main(int argc, char **argv)
{
    int which = argc > 1 ? atoi(argv[1]) : 0;
    switch (which) {
    case 1:                         /* one invocation, two objects */
        op(&x, &y);
        break;
    case 2:                         /* the same operation on other objects, twice */
        op(&x, &y);
        op(&z, &x);
        break;
    case 3:                         /* a phase: only the two calls between the markers count */
        op(&x, &x);
        op(&y, &y);
        phase_begin();
        op(&x, &y);
        op(&y, &z);
        phase_done();
        op(&z, &z);
        break;
    case 4:                         /* object area with stride 256 > sizeof(struct obj) */
        op_block(BLOCK(1), BLOCK(3));
        op_block(BLOCK(0), BLOCK(2));
        op_block(BLOCK(2), BLOCK(2));
        break;
    case 5:                         /* runaway: 10 accesses per invocation */
        many(&x, 10);
        many(&y, 2);
        break;
    case 6:                         /* recursion: one invocation per outer call */
        rec(&x, 3);
        rec(&y, 3);
        break;
    case 7:                         /* elements of an array of the type */
        op(&table[2], &table[0]);
        op(&table[3], &table[1]);
        break;
    }
    return 0;
}
