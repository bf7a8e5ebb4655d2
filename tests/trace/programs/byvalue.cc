/* C++ by-value arguments and returns of target types in instrumented code (see
 * test_trace_byvalue.py): calls, member and operator calls, a constructor's argument,
 * `return E;` and `return {E};`. `tally` has a user copy constructor: its own field reads
 * are the record of its copies. */
#include <cstdio>
#include <utility>
#include "obj.h"

struct tally {
    long n;
    long pad;
    tally() : n(0), pad(0) {}
    tally(const tally &t) : n(t.n + 1), pad(0) {}
};

struct word { int x; int y; };   /* 8 bytes, laid out as in C */

obj g[4];
tally t0;
word w[2];

__attribute__((noinline)) static long take(obj o) { return o.b; }
__attribute__((noinline)) static long count(tally t) { return t.n; }
__attribute__((noinline)) static long takew(word v) { return v.y; }
__attribute__((noinline)) static obj make(long b) { return obj{1, 0, b, 'm'}; }
constexpr long tc(obj o) { return o.b; }

struct sink {
    long seen = 0;
    __attribute__((noinline)) long m(obj o) { return seen += o.a; }
    __attribute__((noinline)) long operator+(obj o) const { return seen + o.b; }
};
struct box {
    obj kept;
    __attribute__((noinline)) explicit box(obj o) : kept(o) {}
};

template <class T> __attribute__((noinline)) long by_any(T t, const obj &o) { return t + o.a; }

/* (0, 0, 24, r) */
__attribute__((noinline)) long arg(const obj *p) { return take(*p); }

/* A method, an operator and a constructor: (0, 0, 24, r) (1, 0, 24, r) (0, 0, 24, r) */
__attribute__((noinline)) long calls(obj *p, const obj &r)
{
    sink s;
    long a = s.m(*p);
    long b = s + r;
    box x(*p);
    return a + b + x.kept.c;
}

/* Returns: (0, 16, 1, w) (0, 0, 24, r) */
__attribute__((noinline)) obj ret(obj *p)
{
    p->c = 'r';
    return *p;
}

/* (0, 0, 24, r) like arg */
__attribute__((noinline)) obj braced(int i) { return {g[i]}; }

/* A local initialised from an object, then returned (an implicit move of a local):
 * only the initialisation's read, (0, 0, 24, r) (0, 0, 24, r) with the second copy */
__attribute__((noinline)) obj local(int i)
{
    obj x = g[i];
    x.b += take(g[i]);
    return x;
}

/* Constant evaluation keeps working; a local constexpr object is no object. */
__attribute__((noinline)) long konst()
{
    constexpr obj k{1, 2, 3, 4};
    static_assert(tc(k) == 3, "constant");
    constexpr long v = tc(k);
    return v + tc(k);
}

/* A user copy constructor reads t.n itself: tally (0, 0, 8, r), nothing else. */
__attribute__((noinline)) long user(const tally *t) { return count(*t); }

/* word: an argument, then an assignment, which clang itself would turn into one 8-byte
 * load and store at -O2: (0, 0, 8, r) (0, 0, 8, r) (1, 0, 8, w) */
__attribute__((noinline)) long words(int i)
{
    long r = takew(w[i]);
    w[1 - i] = w[i];
    return r;
}

/* Left alone: an xvalue and a side effect (warned), a temporary and a call that depends
 * on a template parameter (warned). */
template <class T> __attribute__((noinline)) long unseen(T n, obj *p)
{
    long s = take(std::move(*p));
    s += take(*p++);
    s += take(make(n));
    return s + by_any(n, *p);
}

int main()
{
    for (int i = 0; i < 4; i++) {
        g[i].a = i;
        g[i].b = 10 * i;
        g[i].c = (char)('w' + i);
    }
    t0.n = 40;
    w[0].x = 1, w[0].y = 2, w[1].x = 3, w[1].y = 4;
    long s = arg(&g[1]) + calls(&g[2], g[3]) + konst() + user(&t0) + unseen(5L, g) + words(1);
    obj r = ret(&g[0]);
    obj b = braced(2);
    obj l = local(3);
    std::printf("%ld %d %ld %c %ld %ld %c %d\n", s, r.a, r.b, r.c, b.b, l.b, l.c, w[0].y);
    return 0;
}
