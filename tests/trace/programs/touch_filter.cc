// Issue 31's static filter, C++: `Rec` is touched (a) by member access in a method and a
// free function, (b) in a static inline helper inlined into a caller with no access of its
// own, (c) by std::memcpy (also through a helper that only sees `void *`), (d) through
// offsetof-computed byte pointers (also in a helper that only sees `int *`), and in a
// lambda and a function template. checksum() and fib() cannot touch it.
#include <cstddef>
#include <cstdio>
#include <cstring>

struct Rec {
    long id;
    int hits;
    char tag[12];
    double weight;
    int bump() { return ++hits; }                                                  // (a)
};

static int touch(Rec *r) { return r->bump() + r->hits; }                         // (a)

static inline long rec_id(const Rec *r) { return r->id; }                        // (b)
long sum_ids(Rec **rs, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += rec_id(rs[i]);
    return s;
}

static void copy_bytes(void *d, const void *s, std::size_t n) { std::memcpy(d, s, n); } // (c)
void snapshot(Rec *dst, const Rec *src) { std::memcpy(dst, src, sizeof *dst); }

static void add_to(int *p, int v) { *p += v; }                                   // (d)

template <class T> long weigh(T *r) { return (long)r->weight; }

__attribute__((noinline)) static unsigned checksum(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}
__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

long work(Rec **rs, int n) {
    long s = sum_ids(rs, n);
    for (int i = 0; i < n; i++) {
        Rec tmp;
        s += touch(rs[i]);
        copy_bytes(&tmp, rs[i], sizeof tmp);
        s += tmp.hits;
        add_to(reinterpret_cast<int *>(reinterpret_cast<char *>(rs[i]) + offsetof(Rec, hits)), 3);
        auto heavier = [&]() { rs[i]->weight += 0.5; };
        heavier();
        s += weigh(rs[i]);
    }
    snapshot(rs[0], rs[n - 1]);
    return s + (long)checksum("hello") + fib(10);
}

int main() {
    Rec *rs[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = new Rec();
        rs[i]->id = i + 1;
    }
    long total = 0;
    for (int k = 0; k < 3; k++) total += work(rs, 4);
    std::printf("%ld %d %.1f\n", total, rs[1]->hits, rs[2]->weight);
    for (int i = 0; i < 4; i++) delete rs[i];
    return 0;
}
