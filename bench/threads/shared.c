/* bench/threads/shared.c: the issue-30 benchmark program. Two threads run a fixed number of
 * operations on one shared global struct: per-thread counters written only by their own
 * thread, a read-mostly configuration block read by every thread on every operation, and a
 * spinlock taken every `every`-th operation of a thread to add to a shared total.
 *
 * The struct's layout is chosen at compile time:
 *   (default)     DECLARED: the declared order, which interleaves the counters, the
 *                 configuration and the lock on one cache line;
 *   -DLAYOUT_HAND HAND: the best hand padding: each thread's counters on a line of their
 *                 own, the configuration on its own line, the lock and total on their own
 *                 line (_Alignas(64) on the first member of each group).
 * The CACHEFIT variant is the default source built by `cachefit build` in optimize mode
 * (bench/threads/run.py). The variable, not the type, is _Alignas(64), so the object starts
 * a cache line in every variant.
 *
 * Usage: shared [-n OPS_PER_THREAD] [-t THREADS (1 or 2)] [-r ROUNDS] [-e EVERY] [-p]
 *   -r: arithmetic rounds per operation (the work between two counter writes);
 *   -e: lock period, a power of two; -p: pin thread k to CPU k.
 * Prints sizeof, the checksum (equal for every layout with the same options), the process
 * CPU time and the wall time of the threads' run, the median ns per operation over the
 * chunks run while both threads ran (below) and how many chunks those were, one
 * `key value` per line.
 * Not a general benchmark harness: one struct, one workload.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(LAYOUT_HAND)
#define LINE _Alignas(64)
struct shared {
    LINE unsigned long ops0;    /* thread 0's counters */
    unsigned long sum0;
    LINE unsigned long ops1;    /* thread 1's counters */
    unsigned long sum1;
    LINE unsigned long mult;    /* configuration, read by every thread */
    unsigned long add;
    unsigned long mask;
    unsigned int shift;
    unsigned int rounds;
    unsigned int every;
    LINE int lock;              /* the lock and what it protects */
    unsigned long total;
};
#else
struct shared {
    unsigned long ops0;         /* thread 0: operations done */
    unsigned long mult;         /* config */
    unsigned long sum0;         /* thread 0: sum of the values computed */
    unsigned int shift;         /* config */
    int lock;                   /* spinlock guarding total */
    unsigned long ops1;         /* thread 1: operations done */
    unsigned long add;          /* config */
    unsigned long sum1;         /* thread 1: sum of the values computed */
    unsigned int rounds;        /* config: arithmetic rounds per operation */
    unsigned int every;         /* config: lock period (power of two) */
    unsigned long total;        /* under lock */
    unsigned long mask;         /* config */
};
#endif

_Alignas(64) struct shared g_shared;

static void lock_take(int *l)
{
    for (;;) {
        if (!__atomic_load_n(l, __ATOMIC_RELAXED) &&
            !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
            return;
        __builtin_ia32_pause();
    }
}

static void lock_give(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* The value of operation n: `rounds` dependent multiply-add-shift steps on the
 * configuration (loaded once per call: nothing in the loop stores). */
static unsigned long mix(const struct shared *s, unsigned long n)
{
    unsigned long v = n, mult = s->mult, add = s->add, mask = s->mask;
    unsigned int shift = s->shift, rounds = s->rounds;
    for (unsigned int r = 0; r < rounds; r++)
        v = ((v * mult + add) >> shift) ^ (v & mask);
    return v;
}

#define OP_SLOT(k)                                                       \
    do {                                                                 \
        unsigned long n = s->ops##k + 1;                                 \
        s->ops##k = n;                                                   \
        s->sum##k += mix(s, n);                                          \
        if ((n & (s->every - 1)) == 0) {                                 \
            lock_take(&s->lock);                                         \
            s->total += s->sum##k & 0xffff;                              \
            lock_give(&s->lock);                                         \
        }                                                                \
    } while (0)

/* One operation of thread `me` (0 or 1): the entry function cachefit traces. */
__attribute__((noinline)) void op(struct shared *s, int me)
{
    if (me == 0)
        OP_SLOT(0);
    else
        OP_SLOT(1);
}

/* The threads run their operations in chunks of CHUNK; each chunk records its wall-clock
 * span and the thread's CPU time over it. A chunk is clean when the thread was not
 * descheduled during it (CPU time >= 90 % of the wall span), and paired when it is clean and
 * lies inside a run of the other thread's clean chunks with no gap between them (a thread is
 * preempted at the clock calls between chunks as often as inside one): both threads were running on their
 * cores during the whole chunk, which is when false sharing costs. The machine is shared, so
 * the per-operation figure is the median over paired chunks (clean ones with one thread). */
#define CHUNK 8192ul
#define MAX_GAP_NS 10000ll      /* longer between two chunks: the thread was descheduled */

struct chunk {
    long long t0, t1;           /* CLOCK_MONOTONIC, ns */
    long long c0, c1;           /* CLOCK_THREAD_CPUTIME_ID, ns */
};

struct worker {
    pthread_t tid;
    int me;
    int pin;
    unsigned long ops;
    unsigned long nchunks;
    struct chunk *chunks;
};

static pthread_barrier_t g_start;

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *run(void *arg)
{
    struct worker *w = arg;
    if (w->pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->me, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    pthread_barrier_wait(&g_start);
    unsigned long done = 0;
    for (unsigned long k = 0; k < w->nchunks; k++) {
        unsigned long n = w->ops - done < CHUNK ? w->ops - done : CHUNK;
        struct chunk *ch = &w->chunks[k];
        ch->c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        ch->t0 = now_ns(CLOCK_MONOTONIC);
        for (unsigned long i = 0; i < n; i++)
            op(&g_shared, w->me);
        ch->t1 = now_ns(CLOCK_MONOTONIC);
        ch->c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        done += n;
    }
    return NULL;
}

static int clean(const struct chunk *ch)
{
    return (ch->c1 - ch->c0) * 10 >= (ch->t1 - ch->t0) * 9;
}

/* Appends to out[] the ns per operation of w's full chunks that are clean and, when `other`
 * is given, lie inside one run of other's consecutive clean chunks without gaps; returns the
 * new count. */
static unsigned long used_chunks(const struct worker *w, const struct worker *other,
                                 double *out, unsigned long n_out)
{
    unsigned long j = 0;
    for (unsigned long k = 0; k < w->nchunks; k++) {
        const struct chunk *ch = &w->chunks[k];
        if ((k + 1) * CHUNK > w->ops || !clean(ch))
            continue;
        if (other) {
            /* the first of other's chunks that ends at or after ch starts */
            while (j < other->nchunks && other->chunks[j].t1 < ch->t0)
                j++;
            unsigned long a = j;
            if (a == other->nchunks || !clean(&other->chunks[a]) ||
                other->chunks[a].t0 > ch->t0)
                continue;
            while (a + 1 < other->nchunks && clean(&other->chunks[a]) &&
                   other->chunks[a].t1 < ch->t1 &&
                   other->chunks[a + 1].t0 - other->chunks[a].t1 <= MAX_GAP_NS)
                a++;
            if (!clean(&other->chunks[a]) || other->chunks[a].t1 < ch->t1)
                continue;
        }
        out[n_out++] = (double)(ch->t1 - ch->t0) / (double)CHUNK;
    }
    return n_out;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    unsigned long ops = 30000000;
    int threads = 2, pin = 0, opt;
    unsigned int rounds = 16, every = 64;
    while ((opt = getopt(argc, argv, "n:t:r:e:p")) != -1) {
        switch (opt) {
        case 'n': ops = strtoul(optarg, NULL, 10); break;
        case 't': threads = atoi(optarg); break;
        case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 10); break;
        case 'e': every = (unsigned int)strtoul(optarg, NULL, 10); break;
        case 'p': pin = 1; break;
        default:
            fprintf(stderr, "usage: %s [-n OPS] [-t 1|2] [-r ROUNDS] [-e EVERY] [-p]\n",
                    argv[0]);
            return 2;
        }
    }
    if (threads < 1 || threads > 2 || every == 0 || (every & (every - 1)) != 0) {
        fprintf(stderr, "%s: -t must be 1 or 2, -e a power of two\n", argv[0]);
        return 2;
    }
    struct shared *s = &g_shared;
    s->mult = 0x9E3779B97F4A7C15ul;
    s->add = 0x632BE59BD9B4E019ul;
    s->mask = 0xFFFFFFFFul;
    s->shift = 7;
    s->rounds = rounds;
    s->every = every;

    struct worker w[2];
    pthread_barrier_init(&g_start, NULL, (unsigned)threads + 1);
    for (int k = 0; k < threads; k++) {
        w[k] = (struct worker){.me = k, .pin = pin, .ops = ops,
                               .nchunks = (ops + CHUNK - 1) / CHUNK};
        w[k].chunks = calloc(w[k].nchunks ? w[k].nchunks : 1, sizeof(struct chunk));
        if (!w[k].chunks) {
            perror("calloc");
            return 1;
        }
        if (pthread_create(&w[k].tid, NULL, run, &w[k]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    long long cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), wall0 = now_ns(CLOCK_MONOTONIC);
    pthread_barrier_wait(&g_start);
    for (int k = 0; k < threads; k++)
        pthread_join(w[k].tid, NULL);
    double cpu = (double)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) * 1e-9;
    double wall = (double)(now_ns(CLOCK_MONOTONIC) - wall0) * 1e-9;
    pthread_barrier_destroy(&g_start);

    unsigned long full = 0, used = 0;
    double *per_op = calloc(2 * w[0].nchunks + 1, sizeof(double));
    if (!per_op) {
        perror("calloc");
        return 1;
    }
    for (int k = 0; k < threads; k++) {
        full += ops / CHUNK;
        used = used_chunks(&w[k], threads == 2 ? &w[1 - k] : NULL, per_op, used);
    }
    qsort(per_op, used, sizeof(double), cmp_double);
    double med = used == 0 ? 0.0
                 : used % 2 ? per_op[used / 2] : (per_op[used / 2 - 1] + per_op[used / 2]) / 2;

    unsigned long check = s->ops0 ^ (s->sum0 * 3) ^ (s->ops1 * 5) ^ (s->sum1 * 7) ^
                          (s->total * 11);
    printf("sizeof %zu\n", sizeof(struct shared));
    printf("checksum %016lx\n", check);
    printf("cpu_s %.6f\n", cpu);
    printf("wall_s %.6f\n", wall);
    printf("ns_per_op %.4f\n", med);
    printf("chunks_used %lu\n", used);
    printf("chunks_full %lu\n", full);
    for (int k = 0; k < threads; k++)
        free(w[k].chunks);
    free(per_op);
    return 0;
}
