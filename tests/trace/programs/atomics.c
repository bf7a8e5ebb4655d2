/* Atomic read-modify-write on a traced object from two threads (gcc: __tsan_atomic*). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct cnt {
    _Atomic long hits;  /* @0 */
    long other;         /* @8 */
};
struct cnt c;

#define N 50000

__attribute__((noinline)) void inc(struct cnt *x)
{
    atomic_fetch_add(&x->hits, 1);
    x->other = 1;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        inc(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", atomic_load(&c.hits));
    return 0;
}
