// Single inheritance: an override, a base constructor with arguments, default member
// initializers, a virtual destructor.
#include <cstdio>

struct shape {
    shape(const char* n, int s) : name(n), sides(s) { printf("shape(%s)\n", name); }
    virtual ~shape() { printf("~shape(%s)\n", name); }
    virtual double area() const { return 0.0; }
    virtual const char* kind() const { return "shape"; }
    void describe() const { printf("%s %s sides=%d area=%.2f\n", kind(), name, sides, area()); }
    const char* name;
    int sides;
    double scale = 1.5;
};

struct square : shape {
    square(double s) : shape("sq", 4), side(s) {}
    ~square() override { printf("~square\n"); }
    double area() const override { return side * side * scale; }
    const char* kind() const final { return "square"; }
    double side;
};

int main() {
    square s(2.0);
    s.describe();
    square* p = new square(3.0);
    p->describe();
    delete p;
    return 0;
}
