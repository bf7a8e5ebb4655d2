/* Issue 31's static filter: `struct rec` is touched (a) by member access, (b) in a static
   inline helper inlined into a caller that has no access of its own, (c) by memcpy (also
   through a helper that only sees `void *`), (d) through offsetof-computed byte pointers
   (also in a helper that only sees `int *`). checksum() and fib() cannot touch it. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec { long id; int hits; char tag[12]; double weight; struct rec *next; };

static int touch(struct rec *r) { r->hits++; return r->hits; }                   /* (a) */

static inline long rec_id(const struct rec *r) { return r->id; }                 /* (b) */
long sum_ids(struct rec **rs, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += rec_id(rs[i]);
    return s;
}

static void copy_bytes(void *d, const void *s, size_t n) { memcpy(d, s, n); }    /* (c) */
void snapshot(struct rec *dst, const struct rec *src) { memcpy(dst, src, sizeof *dst); }

static void add_to(int *p, int v) { *p += v; }                                   /* (d) */
static double *weight_of(struct rec *r) {
    return (double *)((char *)r + offsetof(struct rec, weight));
}

__attribute__((noinline)) static unsigned checksum(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}
__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

long work(struct rec **rs, int n) {
    long s = sum_ids(rs, n);
    for (int i = 0; i < n; i++) {
        struct rec tmp;
        s += touch(rs[i]);
        copy_bytes(&tmp, rs[i], sizeof tmp);
        s += tmp.hits;
        add_to((int *)((char *)rs[i] + offsetof(struct rec, hits)), 3);
        *weight_of(rs[i]) += 0.5;
    }
    snapshot(rs[0], rs[n - 1]);
    return s + (long)checksum("hello") + fib(10);
}

int main(void) {
    struct rec *rs[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = malloc(sizeof(struct rec));
        memset(rs[i], 0, sizeof(struct rec));
        rs[i]->id = i + 1;
    }
    long total = 0;
    for (int k = 0; k < 3; k++) total += work(rs, 4);
    printf("%ld %d %.1f\n", total, rs[1]->hits, rs[2]->weight);
    for (int i = 0; i < 4; i++) free(rs[i]);
    return 0;
}
