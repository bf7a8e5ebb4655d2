/* C++ trivial copies and moves of a class in instrumented code (see
 * test_trace_memops.py); `counted` has a user copy assignment, which is left alone. */
#include <cstdio>
#include <utility>
#include "obj.h"

obj g[4];

struct counted {
    int n = 0;
    counted &operator=(const counted &o) { n = o.n + 1; return *this; }
};
counted k1, k2;

__attribute__((noinline)) void assign(obj *dst, const obj *src)
{
    *dst = *src;                      /* (0, 0, 24, r) (1, 0, 24, w) */
    obj &r = *dst;
    r = static_cast<obj &&>(*dst);    /* an xvalue: not seen */
    k1 = k2;                          /* user operator=: its own accesses */
}

/* Not instrumented (see the test's `instrument`), so the optimiser cannot replace the
 * copies' fields by reads of the sources that sanitizer coverage would see. */
__attribute__((noinline)) long sum(const obj &a, const obj &b, const obj &c, const obj &d)
{
    return a.b + b.b + c.b + d.b;
}

__attribute__((noinline)) long inits(const obj *src)
{
    obj x = *src;                     /* (0, 0, 24, r) */
    obj y(g[3]);                      /* (1, 0, 24, r) */
    obj z{*src};                      /* (0, 0, 24, r) */
    obj w = std::move(x);             /* a call: not seen */
    return sum(x, y, z, w);
}

int main()
{
    for (int i = 0; i < 4; i++) {
        g[i].a = i;
        g[i].b = 10 * i;
        g[i].c = (char)('w' + i);
    }
    assign(&g[0], &g[1]);
    long s = inits(&g[2]);
    for (int i = 0; i < 4; i++)
        std::printf("%d %ld %c\n", g[i].a, g[i].b, g[i].c);
    std::printf("%ld %d\n", s, k1.n);
    return 0;
}
