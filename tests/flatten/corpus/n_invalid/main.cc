// Precondition 1: the hierarchy must be valid C++.
struct base {
    virtual int f() const { return 1; }
};
struct derived : base {
    int f() const override { return missing_member; }
};
int main() { derived d; return d.f(); }
