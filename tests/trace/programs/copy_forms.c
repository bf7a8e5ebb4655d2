/* Unusual struct-copy forms that the clang rewrite must compile and keep the behaviour of:
 * register, const and volatile operands, copies inside sizeof, conditions and compound
 * literals (see test_trace_memops.py). */
#include <stdio.h>
#include "obj.h"
struct obj g[4];
struct wrap { int k; struct obj o; } w1, w2;
__attribute__((noinline)) long run(struct obj *d, const struct obj *s, volatile struct obj *v) {
  long t = 0;
  register struct obj r = *s;
  const struct obj c = *s;
  t += r.b + c.b;
  *v = *s;
  struct obj y = *(struct obj *)v;
  w1.o = *s; w2 = w1;
  if ((*d = g[3]).b > 2) t += 100;
  t += (sizeof(*d = *s) == sizeof *d);
  struct obj z = (struct obj){1, 2, 3, 4};
  t += y.b + w2.o.b + z.b;
  return t;
}
int main(void) { for (int i = 0; i < 4; i++) g[i].b = i + 1; printf("%ld\n", run(&g[0], &g[1], &g[2])); printf("%ld %ld %ld\n", g[0].b, g[2].b, w2.o.b); return 0; }
