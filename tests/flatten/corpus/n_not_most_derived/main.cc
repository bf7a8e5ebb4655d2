// Precondition 2: the class to flatten is not the most derived class.
struct base {
    virtual int f() const { return 1; }
};
struct middle : base {
    int f() const override { return 2; }
};
struct leaf : middle {
    int g() const { return 3; }
};
int main() {
    middle m;
    leaf l;
    return m.f() + l.g();
}
