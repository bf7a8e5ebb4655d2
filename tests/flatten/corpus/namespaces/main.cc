// Bases in another namespace, a qualified call through ns::A::, an out-of-line constructor
// of the class, an enum class and a virtual base with a defaulted constructor.
#include <cstdio>
namespace ns {
struct A {
    A(int v) : x(v), arr{1,2} { }
    virtual ~A() { printf("~A\n"); }
    [[nodiscard]] virtual int f() const noexcept { return x; }
    bool operator==(const A& o) const { return x == o.x; }
    int x;
    int arr[2];
    alignas(8) int y = 3;
    enum class color { red, green };
    color c = color::green;
};
struct V { int v = 9; V() = default; };
}
namespace app {
struct T final : ns::A, virtual ns::V {
    T();
    T(int k) : A(k) {}
    int f() const noexcept override final { return ns::A::f() + 1; }
};
}
app::T::T() : A(1) {}
int main() { app::T t; app::T u(1); app::T w(5); printf("%d %d %d %d %d\n", t.f(), (int)(t == u), (int)(t == w), t.arr[1], (int)t.c); printf("%d\n", (int)(t.c == app::T::color::green)); }
