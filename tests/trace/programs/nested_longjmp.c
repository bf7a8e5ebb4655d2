/* longjmp out of nested invocations (issue 26; tests/trace/test_trace_nested.py). */
#include <setjmp.h>
#include <stdio.h>
#include "obj.h"

struct obj a, b;
static jmp_buf back;

/* Not noreturn to the caller: sanitizer-coverage does not instrument a block that ends in
 * a call of a noreturn function (longjmp). */
__attribute__((noinline)) void jump(void)
{
    longjmp(back, 1);
}

__attribute__((noinline)) void thrower(struct obj *x)
{
    x->b = 5;          /* (0, 8, 8, w) */
    jump();
}

/* Ends normally after catching: its end also ends thrower's invocation. */
__attribute__((noinline)) void catcher(struct obj *x, struct obj *y)
{
    x->a = 1;          /* (0, 0, 4, w) */
    if (setjmp(back) == 0)
        thrower(y);    /* (1, 8, 8, w) */
}

/* Left by a longjmp to main together with thrower's invocation. */
__attribute__((noinline)) void runner(struct obj *x)
{
    x->c = 7;          /* (0, 16, 1, w) */
    thrower(x);        /* (0, 8, 8, w) */
}

__attribute__((noinline)) void reader(struct obj *x)
{
    long t = x->b;     /* (0, 8, 8, r) */
    x->a = (int)t;     /* (0, 0, 4, w) */
}

/* A deeper frame than main's own calls, so that the invocations the longjmp leaves lie
 * below the next entry called from main. */
__attribute__((noinline)) void deep(struct obj *x)
{
    volatile char pad[512];
    pad[0] = 0;
    runner(x);
    (void)pad[0];
}

int main(void)
{
    catcher(&a, &b);
    if (setjmp(back) == 0)
        deep(&a);
    reader(&b);        /* ends runner's and thrower's invocations first */
    printf("%d %ld %d\n", a.a, b.b, (int)a.c);
    return 0;
}
