/* Two threads taking turns on one object (issue 30; tests/trace/test_trace_sharing.py).
 *
 * A script of steps, each run by one thread in turn (a mutex and a condition variable
 * hand the turn on), so the order of the invocations is fixed.  Modes (argv[1]):
 *   pingpong  the threads read and write fields of one shared object, and each its own;
 *   private   each thread touches only its own object;
 *   long      thread 1 reads `a` then writes `b` many times in one invocation (a summary
 *             with a small max_accesses), thread 0 reads `b`;
 *   many      thread 1 touches 50,000 elements of an array, one invocation each (more
 *             objects than the runtime's table holds), then thread 0 the shared object;
 *   nested    thread 0 writes `b`, thread 1 runs `outer`, which calls the entry `put_a`
 *             and then reads `b` (one invocation ending once: only the outermost end);
 *   single    the pingpong steps, all on the main thread.
 * struct obj (obj.h): a@0 (4), pad@4, b@8 (8), c@16 (1); 24 bytes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "obj.h"

__attribute__((noinline)) void put_a(struct obj *x)
{
    x->a = 1;                /* w 0:4 */
}

__attribute__((noinline)) void get_a_put_b(struct obj *x)
{
    x->b = x->a;             /* r 0:4, w 8:8 */
}

__attribute__((noinline)) void get_b_put_a(struct obj *x)
{
    x->a = (int)x->b;        /* r 8:8, w 0:4 */
}

__attribute__((noinline)) long get_a(struct obj *x)
{
    return x->a;             /* r 0:4 */
}

__attribute__((noinline)) long get_b(struct obj *x)
{
    return x->b;             /* r 8:8 */
}

__attribute__((noinline)) void own(struct obj *x)
{
    x->c = 7;                /* w 16:1 */
}

__attribute__((noinline)) void long_op(struct obj *x)
{
    int v = x->a;            /* r 0:4, then 100 times w 8:8 */
    for (int i = 0; i < 100; i++)
        x->b = v + i;
}

__attribute__((noinline)) long outer(struct obj *x)
{
    put_a(x);                /* a nested invocation: w 0:4 */
    return x->b;             /* r 8:8 */
}

#define MANY 50000

enum op { PUT_A, GET_A_PUT_B, GET_B_PUT_A, GET_A, GET_B, OWN, LONG_OP, OWN_MANY, OUTER };
struct step {
    int thread;
    enum op op;
    int own; /* OWN: the thread's own object, else the shared one */
};

static const struct step PINGPONG[] = {
    {0, PUT_A, 0},        /* before tracking: not recorded */
    {1, OWN, 1},          /* thread 1 begins: tracking starts */
    {1, GET_A_PUT_B, 0},
    {0, GET_B_PUT_A, 0},  /* handoff 8:8 / 0:4,8:8 */
    {0, OWN, 1},
    {1, GET_A_PUT_B, 0},  /* handoff 0:4 / 0:4,8:8 */
    {0, GET_B_PUT_A, 0},  /* handoff 8:8 / 0:4,8:8 */
    {1, GET_A, 0},        /* handoff 0:4 / 0:4 */
    {1, GET_A, 0},        /* already charged */
    {0, GET_B, 0},        /* its own writes */
};
static const struct step PRIVATE[] = {
    {0, OWN, 1}, {1, OWN, 1}, {0, OWN, 1}, {1, OWN, 1},
};
static const struct step LONG[] = {
    {0, OWN, 1},
    {1, OWN, 1},
    {1, LONG_OP, 0},
    {0, GET_B, 0},        /* handoff 8:8 / 8:8 */
};

static const struct step MANY_STEPS[] = {
    {0, OWN, 1},
    {1, OWN, 1},
    {1, OWN_MANY, 0},
    {0, GET_B, 0},
};

static const struct step NESTED[] = {
    {0, OWN, 1},
    {1, OWN, 1},
    {0, GET_A_PUT_B, 0},
    {1, OUTER, 0},        /* handoff 8:8 / 0:4,8:8 */
};

static const struct step *script;
static int nsteps;
static struct obj *shared, *mine[2], *many;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;
static long sink;

static void run(const struct step *s, struct obj *o)
{
    switch (s->op) {
    case PUT_A: put_a(o); break;
    case GET_A_PUT_B: get_a_put_b(o); break;
    case GET_B_PUT_A: get_b_put_a(o); break;
    case GET_A: sink += get_a(o); break;
    case GET_B: sink += get_b(o); break;
    case OWN: own(o); break;
    case LONG_OP: long_op(o); break;
    case OUTER: sink += outer(o); break;
    case OWN_MANY:
        for (int i = 0; i < MANY; i++)
            own(&many[i]);
        break;
    }
}

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < nsteps; i++) {
        if (script[i].thread != me)
            continue;
        pthread_mutex_lock(&mu);
        while (turn != i)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        run(&script[i], script[i].own ? mine[me] : shared);
        pthread_mutex_lock(&mu);
        turn = i + 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pingpong";
    shared = malloc(sizeof(struct obj));
    mine[0] = malloc(sizeof(struct obj));
    mine[1] = malloc(sizeof(struct obj));
    many = malloc(MANY * sizeof(struct obj));
    memset(shared, 0, sizeof *shared);
    if (strcmp(mode, "private") == 0) {
        script = PRIVATE;
        nsteps = sizeof PRIVATE / sizeof PRIVATE[0];
    } else if (strcmp(mode, "nested") == 0) {
        script = NESTED;
        nsteps = sizeof NESTED / sizeof NESTED[0];
    } else if (strcmp(mode, "many") == 0) {
        script = MANY_STEPS;
        nsteps = sizeof MANY_STEPS / sizeof MANY_STEPS[0];
    } else if (strcmp(mode, "long") == 0) {
        script = LONG;
        nsteps = sizeof LONG / sizeof LONG[0];
    } else {
        script = PINGPONG;
        nsteps = sizeof PINGPONG / sizeof PINGPONG[0];
    }
    if (strcmp(mode, "single") == 0) {
        for (int i = 0; i < nsteps; i++)
            run(&script[i], script[i].own ? mine[0] : shared);
    } else {
        pthread_t t[2];
        for (long i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
    printf("%d %ld\n", shared->a, (long)shared->b);
    return 0;
}
