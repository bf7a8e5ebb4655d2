// CRTP-style mix-ins: class template bases parameterized by the derived class, with a
// non-type parameter and a default template argument.
#include <cstdio>

template <class D, int Step = 1>
struct counting {
    void tick() { ticks += Step; static_cast<D*>(this)->on_tick(ticks); }
    int ticks = 0;
    static const int step = Step;
};

template <class D>
struct printable {
    void print() const {
        const D& self = static_cast<const D&>(*this);
        printf("%s: ticks=%d total=%ld\n", self.label(), self.ticks, total);
    }
    printable<D>& reset() { total = 0; return *this; }
    long total = 0;
};

struct clock : counting<clock, 5>, printable<clock> {
    void on_tick(int t) { total += t; }
    const char* label() const { return "clock"; }
};

int main() {
    clock c;
    c.tick();
    c.tick();
    c.print();
    c.reset().print();
    printf("step=%d\n", clock::step);
    return 0;
}
