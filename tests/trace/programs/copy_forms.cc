/* Unusual C++ copy forms that the clang rewrite must compile and keep the behaviour of:
 * auto, range-for, lambdas, templates, classes with virtual functions, local classes,
 * sizeof (see test_trace_memops.py). */
#include <cstdio>
#include "obj.h"
obj g[4];
struct base { obj o; virtual ~base() {} };
template <class T> T tcopy(T *d, const T *s) { *d = *s; T x = *s; return x; }
__attribute__((noinline)) long run(obj *d, const obj *s) {
  long t = 0;
  for (obj x : g) t += x.b;
  for (const obj &x : g) { obj y = x; t += y.a; }
  const obj c = *s;
  auto a = *s;
  t += c.b + a.b;
  [&]() { *d = g[2]; }();
  obj r = tcopy(d, s);
  base b1, b2; b1.o = *s; b2 = b1;
  t += r.b + b2.o.b;
  struct local { obj o; int k; } l1{}, l2{};
  l1.o = *s; l2 = l1;
  t += l2.o.b + (sizeof(*d = *s) == sizeof(obj));
  return t;
}
int main() { for (int i = 0; i < 4; i++) g[i].b = i + 1; std::printf("%ld\n", run(&g[0], &g[1])); std::printf("%ld %ld\n", g[0].b, g[2].b); }
