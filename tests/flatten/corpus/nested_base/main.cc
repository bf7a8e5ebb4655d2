// A template base declared in a class and defined out of line (re2's Regexp::Walker<T>):
// its code names the enclosing class's types, enumerators and static members unqualified.
#include <cstdio>
namespace re {
class Node {
 public:
  enum Op { kLeaf, kPair };
  struct Info { int weight; };
  explicit Node(int v) : op_(kLeaf), v_(v) {}
  Node(Node* a, Node* b) : op_(kPair), v_(0), a_(a), b_(b) {}
  Op op() const { return op_; }
  int v() const { return v_; }
  Node* a() const { return a_; }
  Node* b() const { return b_; }
  template <typename T> class Walker;
  class Counter;
  static int Scale() { return 3; }
 private:
  friend class SumWalker;
  static int Secret() { return 7; }
  Op op_;
  int v_;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
};

template <typename T> class Node::Walker {
 public:
  Walker() : visits_(0) {}
  virtual ~Walker() {}
  virtual T Visit(Node* n, T left, T right) = 0;
  virtual T Leaf(Node* n) { return T(n->v() * Scale()); }
  T Walk(Node* n);
  int visits() const { return visits_; }
 protected:
  Info info_{Secret()};
 private:
  int visits_;
};

template <typename T> T Node::Walker<T>::Walk(Node* n) {
  ++visits_;
  if (n->op() == kLeaf)
    return Leaf(n);
  Op op = n->op();
  return Visit(n, Walk(n->a()), Walk(n->b())) + T(op == kPair ? 0 : 1);
}

// The non-template variant.
class Node::Counter {
 public:
  virtual ~Counter() {}
  int Count(Node* n);
  virtual int Weight(Node* n) const { return n->op() == kLeaf ? 1 : 0; }
};

int Node::Counter::Count(Node* n) {
  if (n->op() != kPair)
    return Weight(n);
  return Count(n->a()) + Count(n->b());
}
}  // namespace re

namespace re {
class SumWalker : public Node::Walker<long> {
 public:
  long Visit(Node*, long left, long right) override { return left + right + info_.weight; }
};

class MaxWalker : public Node::Walker<int> {   // another user of the template: it stays
 public:
  int Visit(Node*, int left, int right) override { return left > right ? left : right; }
};
}  // namespace re

class LeafCounter : public re::Node::Counter {
 public:
  int Weight(re::Node* n) const override { return n->op() == re::Node::kLeaf ? 2 : 0; }
};

int main() {
  re::Node a(1), b(2), c(5);
  re::Node ab(&a, &b), abc(&ab, &c);
  re::SumWalker s;
  re::MaxWalker m;
  LeafCounter lc;
  long sum = s.Walk(&abc);
  printf("sum=%ld visits=%d max=%d leaves=%d\n", sum, s.visits(), m.Walk(&abc), lc.Count(&abc));
  return 0;
}
