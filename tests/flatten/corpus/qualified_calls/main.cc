// Explicit qualified calls of base versions from the derived class: renamed copies.
#include <cstdio>

struct generic {
    virtual void init() { printf("generic::init\n"); level = 1; }
    virtual int cost() const { return 10; }
    int level = 0;
};

struct arch : generic {
    void init() override {
        generic::init();
        printf("arch::init level=%d\n", level);
        level = 2;
    }
    int cost() const override { return generic::cost() + 5; }
};

struct platform : arch {
    void init() override {
        arch::init();
        printf("platform::init cost=%d\n", cost());
        level = 3;
    }
    int cost() const override { return arch::cost() * 2; }
};

int main() {
    platform p;
    p.init();
    printf("level=%d cost=%d\n", p.level, p.cost());
    return 0;
}
