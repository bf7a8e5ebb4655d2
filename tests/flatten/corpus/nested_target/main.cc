// The flattened class is nested in another class and defined out of line (re2's
// DFA::Workq : SparseSet); the base's member defined out of line moves behind it.
#include <cstdio>
namespace sp {
class Set {
 public:
  explicit Set(int cap);
  virtual ~Set() {}
  int size() const { return n_; }
  void insert(int v) { if (n_ < cap_) data_[n_++] = v; }
  virtual int mark() const { return -1; }
 protected:
  int data_[16] = {};
  int n_ = 0;
 private:
  int cap_;
};

Set::Set(int cap) : cap_(cap > 16 ? 16 : cap) {}
}  // namespace sp

namespace app {
class Engine {
 public:
  class Queue;
  struct Box { struct Slot; };
  int run();
 private:
  int limit_ = 3;
};

class Engine::Queue : public sp::Set {
 public:
  explicit Queue(int cap) : Set(cap), extra_(cap) {}
  int mark() const override { return extra_ + size(); }
 private:
  int extra_;
};

struct Engine::Box::Slot : sp::Set {
  Slot() : Set(2) {}
  int mark() const override { return 100 + size(); }
};

int Engine::run() {
  Queue q(limit_);
  for (int i = 0; i < 5; i++) q.insert(i);
  Box::Slot s;
  s.insert(1);
  return q.mark() * 1000 + s.mark();
}
}  // namespace app

int main() {
  app::Engine e;
  printf("run=%d\n", e.run());
  return 0;
}
