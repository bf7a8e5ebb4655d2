// A base class that another class also derives from is kept; the flat class gets copies.
#include <cstdio>
struct counter {
    counter(int s) : n(s) {}
    virtual void bump();
    int n;
};
void counter::bump() { n += 2; }
struct other : counter { other() : counter(100) {} };
struct T : counter {
    T() : counter(1) {}
    void bump() override { counter::bump(); n *= 10; }
};
int main() { T t; other o; t.bump(); o.bump(); printf("%d %d\n", t.n, o.n); }
