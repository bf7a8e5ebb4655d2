/* Two threads: each allocates, traces and frees objects while the other does the same. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "obj.h"

#define N 20000

__attribute__((noinline)) void op(struct obj *x)
{
    x->a = x->a + 1; /* (0, 0, 4, r) (0, 0, 4, w) */
    x->c = 2;        /* (0, 16, 1, w) */
}

static void *worker(void *arg)
{
    long sum = 0;
    (void)arg;
    for (int i = 0; i < N; i++) {
        struct obj *o = malloc(sizeof(struct obj));
        o->a = i;
        op(o);
        sum += o->a;
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
