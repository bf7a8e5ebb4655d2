/* Nested invocations on two threads at once (issue 26; tests/trace/test_trace_nested.py). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"

#define N 5000

__attribute__((noinline)) void leaf(struct obj *x)
{
    x->c = 1;          /* (0, 16, 1, w) */
}

__attribute__((noinline)) void op(struct obj *x, struct obj *y)
{
    x->a = x->a + 1;   /* (0, 0, 4, r) (0, 0, 4, w) */
    leaf(y);           /* (1, 16, 1, w); leaf: (0, 16, 1, w) */
    leaf(x);           /* (0, 16, 1, w); leaf: (0, 16, 1, w) */
}

static void *worker(void *arg)
{
    long sum = 0;
    (void)arg;
    for (int i = 0; i < N; i++) {
        struct obj *o = malloc(sizeof(struct obj)), *p = malloc(sizeof(struct obj));
        o->a = i;
        op(o, p);
        sum += o->a;
        free(p);
        free(o);
    }
    return (void *)sum;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    long total = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("%ld\n", total);
    return 0;
}
