// Class template instances as traced types (see test_trace_templates.py).
#include <cstdio>

namespace mem {
template <class T> struct pool {
    T a;     // @0
    long n;  // @8
    T b;     // @16 (pool<int>) / @16 (pool<double>)
};
}  // namespace mem

mem::pool<int> gi;
mem::pool<double> gd;  // another instance: not traced

__attribute__((noinline)) void op(mem::pool<int> *p, mem::pool<double> *q)
{
    p->n = 1;    // (0, 8, 8, w)
    q->b = 2.0;  // not traced
    p->a = 3;    // (0, 0, 4, w)
}

int main()
{
    auto *h = new mem::pool<int>();  // registered at the new-expression
    op(&gi, &gd);
    op(h, &gd);
    op(h, &gd);
    std::printf("%d\n", gi.a + h->a);
    delete h;
    return 0;
}
