/* Times byte_copy against glibc memcpy at one payload size; prints ns per copy (median). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *byte_copy(void *restrict dst, const void *restrict src, size_t n);

typedef void *(*copy_fn)(void *restrict, const void *restrict, size_t);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `reps` batches of ns per copy; each batch copies enough to take ~2 ms. */
static double measure(copy_fn fn, unsigned char *dst, const unsigned char *src, size_t n,
                      int reps)
{
    size_t iters = (size_t)(4u << 20) / (n + 64) + 1;
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (size_t i = 0; i < iters; i++) {
            fn(dst, src, n);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        t[r] = (now_ns() - t0) / (double)iters;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    double med = t[reps / 2];
    free(t);
    return med;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    static const size_t sizes[] = {8, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char *src = aligned_alloc(64, max), *dst = aligned_alloc(64, max);
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 131u + 7u);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        double loop = measure(byte_copy, dst, src, n, reps);
        if (memcmp(dst, src, n) != 0) {
            fprintf(stderr, "byte_copy is wrong at %zu bytes\n", n);
            return 1;
        }
        double libc = measure(memcpy, dst, src, n, reps);
        printf("%zu %.3f %.3f\n", n, loop, libc);
    }
    free(src);
    free(dst);
    return 0;
}
