// Overloaded virtual functions, partly overridden: the base keeps calling its own
// (not overridden) overload virtually, which flattening keeps as a renamed copy.
#include <cstdio>

struct sink {
    virtual void put(int v) { printf("sink int %d\n", v); }
    virtual void put(double v) { printf("sink double %.1f\n", v); }
    void put_both(int i, double d) { put(i); put(d); }
};

struct buffered : sink {
    void put(int v) override { printf("buffered int %d\n", v); ++n; }
    int n = 0;
};

int main() {
    buffered b;
    b.put_both(3, 2.5);
    b.put(4);
    printf("n=%d\n", b.n);
    return 0;
}
