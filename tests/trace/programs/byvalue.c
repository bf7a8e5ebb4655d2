/* By-value arguments and returns of target types in instrumented code (see
 * test_trace_byvalue.py). `struct obj` (24 bytes) is passed and returned in memory,
 * `struct duo` (16 bytes) in two registers: clang alone copies the first with an unseen
 * memcpy and loads the second's fields from the source (at -O0 all of them, at -O2 those
 * the callee uses), so the profile would depend on the optimisation level. The clang
 * backend's rewrite records each copy as one read of the whole source. */
#include <stdio.h>
#include "obj.h"

struct duo { long x; long y; };
struct word { int x; int y; };              /* 8 bytes: one register */
struct holder { int tag; struct obj o; };   /* contains a target: obj at offset 8 */

struct obj g[4];
struct duo d[2];
struct holder h;
struct word w[2];

/* Callees: their parameters are copies, not objects, so they add nothing. */
__attribute__((noinline)) static long take(struct obj o) { return o.b; }
__attribute__((noinline)) static long take2(struct obj a, struct obj b) { return a.a - b.a; }
__attribute__((noinline)) static long takeh(struct holder v) { return v.o.b + v.tag; }
__attribute__((noinline)) static long taked(struct duo v) { return v.x + v.y; }
static inline long peek(struct duo v) { return v.y; }   /* inlined at -O2 */
__attribute__((noinline)) static long takew(struct word v) { return v.y; }
__attribute__((noinline)) static struct obj make(long b)
{
    struct obj o = {1, 0, b, 'm'};
    return o;
}

/* (0, 0, 24, r) */
__attribute__((noinline)) long arg(struct obj *p) { return take(*p); }

/* Two arguments, evaluated left to right by clang: (0, 0, 24, r) (1, 0, 24, r) */
__attribute__((noinline)) long two(int i, int j) { return take2(g[i], g[j]); }

/* A containing type: its obj is read whole, then a.o.a: (0, 0, 24, r) (0, 0, 4, r) */
__attribute__((noinline)) long hold(void)
{
    long r = takeh(h);
    return r + h.o.a;
}

/* The return value: (0, 16, 1, w) (0, 0, 24, r) */
__attribute__((noinline)) struct obj ret(int i)
{
    g[i].c = 'r';
    return g[i];
}

/* duo in registers: (0, 0, 16, r) */
__attribute__((noinline)) long argd(const struct duo *q) { return taked(*q); }

/* An inlined callee that uses one field, twice: (0, 0, 16, r) (0, 0, 16, r) */
__attribute__((noinline)) long inl(struct duo *q) { return peek(*q) + 2 * peek(*q); }

/* duo returned in registers: (0, 0, 8, w) (0, 0, 16, r) */
__attribute__((noinline)) struct duo retd(struct duo *q)
{
    q->x = 5;
    return *q;
}

/* word: an argument, then an assignment, which clang itself would turn into one 8-byte
 * load and store at -O2: (0, 0, 8, r) (0, 0, 8, r) (1, 0, 8, w) */
__attribute__((noinline)) long words(int i)
{
    long r = takew(w[i]);
    w[1 - i] = w[i];
    return r;
}

/* Left alone: a side effect and a conditional (warned), a temporary (nothing copied). */
__attribute__((noinline)) long unseen(const struct obj *p, int n)
{
    long s = take(*p++);
    s += take(n ? p[1] : p[2]);
    s += take(make(n));
    return s;
}

/* A local initialised from an object, then only two fields used (clang alone would load
 * those from g[i] at -O2 as well): (0, 0, 24, r) */
__attribute__((noinline)) long local(int i)
{
    struct obj x = g[i];
    return x.b + x.a;
}

int main(void)
{
    for (int i = 0; i < 4; i++) {
        g[i].a = i;
        g[i].b = 10 * i;
        g[i].c = (char)('w' + i);
    }
    d[0].x = 3, d[0].y = 4, d[1].x = 7, d[1].y = 9;
    h.tag = 100, h.o.a = 6, h.o.b = 60;
    w[0].x = 1, w[0].y = 2, w[1].x = 3, w[1].y = 4;
    long s = arg(&g[1]) + two(2, 3) + hold() + argd(&d[0]) + inl(&d[1]) + unseen(g, 1) + words(1) + local(2);
    struct obj r = ret(3);
    struct duo e = retd(&d[0]);
    printf("%ld %d %ld %c %ld %ld %d\n", s, r.a, r.b, r.c, e.x, e.y, w[0].y);
    return 0;
}
