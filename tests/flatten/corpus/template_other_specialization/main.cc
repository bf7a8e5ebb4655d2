// Another class derives from another specialization of the template base (W<long>): the
// template stays, only the hierarchy of A is flattened.
#include <cstdio>
template <typename T> struct W {
    virtual ~W() {}
    T get() { return v() + base; }
    virtual T v() = 0;
    T base = 10;
};
struct A : W<int> { int v() override { return 1; } };
struct B : W<long> { long v() override { return 2; } };
int main() { A a; B b; printf("%d %ld\n", a.get(), b.get()); }
