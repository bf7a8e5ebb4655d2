// Precondition 4: a type name redefined in the derived class while base code uses the
// base's meaning.
struct base {
    typedef short value_t;
    value_t small() const { return value_t(70000); }
};
struct derived : base {
    typedef long value_t;
    value_t big() const { return 70000; }
};
int main() {
    derived d;
    return d.small() != d.big();
}
