// A shared virtual base initialized by the most derived class; the intermediate classes'
// initializers of the virtual base are ignored, as in C++.
#include <cstdio>

struct node {
    node(int v) : value(v) { printf("node(%d)\n", v); }
    virtual ~node() { printf("~node\n"); }
    virtual int weight() const { return value; }
    int value;
};

struct left : virtual node {
    left() : node(100), lw(1) { printf("left weight=%d\n", weight()); }
    ~left() override { printf("~left\n"); }
    int lw;
};

struct right : virtual node {
    right(int r) : node(200), rw(r) { printf("right\n"); }
    ~right() override { printf("~right\n"); }
    int weight() const override { return value + rw; }
    int rw;
};

struct bottom : left, right {
    bottom() : node(7), right(3) { printf("bottom weight=%d value=%d\n", weight(), value); }
    ~bottom() { printf("~bottom\n"); }
};

int main() {
    bottom b;
    printf("lw=%d rw=%d w=%d\n", b.lw, b.rw, b.weight());
    return 0;
}
