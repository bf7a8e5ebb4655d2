// Operators and a conversion function declared in the bases.
#include <cstdio>

struct vec2 {
    int x = 0, y = 0;
    bool operator==(const vec2& o) const { return x == o.x && y == o.y; }
    vec2& operator+=(const vec2& o) { x += o.x; y += o.y; return *this; }
    int operator[](int i) const { return i == 0 ? x : y; }
};

struct callable {
    int calls = 0;
    int operator()(int v) { ++calls; return v * 3; }
    explicit operator bool() const { return calls > 0; }
};

struct point : vec2, callable {
    point(int a, int b) { x = a; y = b; }
};

int main() {
    point p(1, 2), q(1, 2);
    printf("%d\n", p == q);
    p += q;
    printf("%d %d\n", p[0], p[1]);
    printf("%d\n", p == q);
    printf("%d\n", static_cast<bool>(p));
    printf("%d\n", p(5));
    printf("%d calls=%d\n", static_cast<bool>(p), p.calls);
    return 0;
}
