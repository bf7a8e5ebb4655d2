// Precondition 2: a base class is instantiated outside the hierarchy.
struct base {
    virtual int f() const { return 1; }
};
struct derived : base {
    int f() const override { return 2; }
};
int main() {
    derived d;
    base b;
    return d.f() + b.f();
}
