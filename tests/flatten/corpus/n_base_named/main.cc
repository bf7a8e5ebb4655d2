// Precondition 2: outside code names a base class (a qualified call of a base version).
struct base {
    virtual int f() const { return 1; }
};
struct derived : base {
    int f() const override { return 2; }
};
int main() {
    derived d;
    return d.base::f();
}
