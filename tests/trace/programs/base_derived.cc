/* A base class and a class derived from it, both traced (issue 27 item 4; bench/projects/
 * RESULTS.md, tinyxml2: XMLElement derives from XMLNode): a Derived object is registered
 * as Derived and, by Base's constructor, as Base at the same address.  touch_derived works
 * on base and derived members through a Derived *, touch_base on base members through a
 * Base * (twice on a Derived, once on a plain Base), touch_two on the plain Base and the
 * Derived's base part.  Base: a 0, b 8, c 16 (24 bytes); Derived: d 24, e 32 (40 bytes).
 * Tail's member t lies in Base's tail padding (Base has a constructor, so it is no POD and
 * the Itanium C++ ABI reuses the padding): t 20 (24 bytes); touch_tail writes t and c. */
#include <cstdio>

struct Base {
    long a;
    long b;
    int c;
    Base() : a(0), b(0), c(0) {}
};

struct Derived : Base {
    long d;
    long e;
    Derived() : d(0), e(0) {}
};

struct Tail : Base {
    int t;
    Tail() : t(0) {}
};

long touch_derived(Derived *x)
{
    x->a = 1;
    long v = x->b;
    x->d = v;
    return x->e;
}

long touch_base(Base *x)
{
    x->c = 2;
    return x->a;
}

void touch_two(Base *x, Derived *y)
{
    x->a = 3;
    y->b = 4;
}

void touch_tail(Tail *x)
{
    x->t = 5;
    x->c = 6;
}

int main()
{
    Derived *obj = new Derived();
    Base *plain = new Base();
    long s = 0;
    for (int i = 0; i < 3; i++)
        s += touch_derived(obj);
    for (int i = 0; i < 2; i++)
        s += touch_base(obj);
    s += touch_base(plain);
    touch_two(plain, obj);
    Tail *tail = new Tail();
    touch_tail(tail);
    std::printf("%ld %zu %zu %zu %zu\n", s, sizeof(Base), sizeof(Derived), sizeof(Tail),
                (size_t)((char *)&tail->t - (char *)tail));
    delete tail;
    delete obj;
    delete plain;
    return 0;
}
