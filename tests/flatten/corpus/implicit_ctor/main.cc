// The class has no constructor: one is added to call the base constructors; a class
// template base with a static data member defined out of line.
#include <cstdio>
struct V { V() { printf("V()\n"); ++made; } virtual ~V() = default; static int made; int vv = 1; };
int V::made = 0;
template <class D> struct mix : virtual V {
    mix() { printf("mix()\n"); }
    ~mix() override { printf("~mix\n"); }
    static int count;
    void hit() { ++count; static_cast<D*>(this)->on_hit(); }
};
template <class D> int mix<D>::count = 0;
struct T : mix<T> {
    void on_hit() { printf("hit %d made %d\n", count, made); }
};
int main() { { T t; t.hit(); t.hit(); } printf("%d\n", T::count); }
