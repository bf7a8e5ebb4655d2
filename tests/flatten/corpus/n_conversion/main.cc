// Precondition 2: the most derived class is converted to a base class (slicing copy).
struct base {
    virtual int f() const { return 1; }
    int v = 3;
};
struct derived : base {
    int f() const override { return 2; }
};
template <class T>
int value_of(T x) { return x.v; }
int main() {
    derived d;
    return value_of<base>(d);
}
