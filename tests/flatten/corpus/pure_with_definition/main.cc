// leveldb's DB::Put: a pure virtual function with a default definition, which the
// derived class calls as Base::Put(); its renamed copy must not stay pure.
#include <cstdio>
class Base {
 public:
  virtual ~Base() = default;
  virtual int Put(int v) = 0;  // pure, but defined below
 protected:
  int stored_ = 0;
};
int Base::Put(int v) { stored_ = v; return v; }

class Impl : public Base {
 public:
  int Put(int v) override { return Base::Put(v) + 1; }
  int get() const { return stored_; }
};

int main() {
  Impl i;
  int r = i.Put(41);
  std::printf("%d %d\n", r, i.get());
  return r == 42 ? 0 : 1;
}
