// Precondition 2: dynamic_cast on the class.
struct base {
    virtual ~base() {}
};
struct derived : base {
    int x = 4;
};
int main() {
    derived d;
    derived* p = &d;
    void* whole = dynamic_cast<void*>(p);
    return whole == p ? 0 : 1;
}
