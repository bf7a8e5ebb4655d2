// The flattened class is defined inside another class; the base's constructor, defined out
// of line, becomes an init function defined behind the enclosing class.
#include <cstdio>
static int twice(int v) { return 2 * v; }
struct Base {
  Base(int v);
  virtual ~Base() {}
  virtual int get() const { return v_; }
  int dbl() const { return twice(v_); }
  int v_;
};
Base::Base(int v) : v_(v) { printf("Base(%d)\n", v); }
struct Outer {
  struct In : Base {
    In() : Base(4) {}
    int get() const override { return v_ + 1; }
  };
  static int thrice(int v) { return 3 * v; }
  int go() { In i; return i.get() * 100 + i.dbl() + thrice(1); }
};
int main() { Outer o; printf("%d\n", o.go()); }
