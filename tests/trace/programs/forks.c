/* Invocations in a parent and its forked child are counted once each. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "obj.h"

struct obj g;

__attribute__((noinline)) void op(struct obj *x)
{
    x->b = x->b + 2; /* (0, 8, 8, r) (0, 8, 8, w) */
}

int main(void)
{
    op(&g);
    op(&g);
    pid_t pid = fork();
    if (pid == 0) {
        op(&g);
        op(&g);
        op(&g);
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    op(&g);
    printf("%ld %d\n", g.b, WEXITSTATUS(status));
    return 0;
}
