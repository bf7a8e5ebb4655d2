/* Writing the trace on request: a signal, then the end of the next invocation. The
 * process leaves with _exit, so nothing is written at exit. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "obj.h"

struct obj g;

__attribute__((noinline)) void op(struct obj *x)
{
    x->c = 1; /* (0, 16, 1, w) */
}

int main(void)
{
    op(&g);
    op(&g);
    op(&g);
    raise(SIGUSR2);
    op(&g);   /* the trace is written when this invocation ends */
    op(&g);   /* not in the written trace */
    fflush(stdout);
    _exit(0);
}
