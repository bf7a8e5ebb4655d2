// Precondition 2: typeid on the class.
#include <typeinfo>
struct base {
    virtual ~base() {}
};
struct derived : base {
    int x = 4;
};
int main() {
    derived d;
    return typeid(d).name()[0] == 0;
}
