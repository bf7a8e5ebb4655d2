// Precondition 2: a pointer to a base class outside the hierarchy.
struct base {
    virtual int f() const { return 1; }
};
struct derived : base {
    int f() const override { return 2; }
};
struct registry {
    base* owner = nullptr;
};
int main() {
    derived d;
    registry r;
    return d.f() + (r.owner != nullptr);
}
