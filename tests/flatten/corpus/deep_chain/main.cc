// A four-level chain with overrides at different levels, called through a pointer to the
// most derived class.
#include <cstdio>

struct l0 {
    virtual ~l0() {}
    virtual int f() const { return 1; }
    virtual int g() const { return f() * 10; }
    virtual int h() const { return 100; }
    short a = 1;
};
struct l1 : l0 {
    int f() const override { return 2; }
    char b = 2;
};
struct l2 : l1 {
    int g() const override { return f() * 20 + b; }
    double c = 3.5;
};
struct l3 : l2 {
    int h() const override { return g() + a; }
    char d = 4;
};

int sum(const l3* p) { return p->f() + p->g() + p->h(); }

int main() {
    l3 x;
    l3* p = &x;
    printf("%d %d %d %d %.1f %d\n", p->f(), p->g(), p->h(), sum(p), p->c, p->d);
    return 0;
}
