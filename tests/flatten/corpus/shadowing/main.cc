// A data member shadowed in the usual way (the base's copy is unused), and a non-virtual
// function hidden by the derived class but still called by base code (a renamed copy keeps
// the base version).
#include <cstdio>

struct base {
    int id = 1;             // shadowed by derived::id, never used by base code
    int hits = 0;
    void touch() { ++hits; describe(); }
    void describe() { printf("base describe hits=%d\n", hits); }
    int value() const { return 10; }
};

struct derived : base {
    long id = 42;
    void describe() { printf("derived describe id=%ld\n", id); }
    int value() const { return base::value() + 1; }
};

int main() {
    derived d;
    d.touch();
    d.describe();
    printf("id=%ld hits=%d value=%d\n", d.id, d.hits, d.value());
    return 0;
}
