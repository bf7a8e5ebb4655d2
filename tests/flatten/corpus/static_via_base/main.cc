// Outside code names a base to reach its static members, nested types and enumerators
// (re2's RegexpGenerator::EgrepOps()): no object is converted to the base, so the flat
// class, which has the same members, takes the base's place in the qualifier.
#include <cstdio>
#include <vector>
namespace gen {
class Generator {
 public:
  enum Mode { kSum, kMax };
  struct Limits { int lo, hi; };
  explicit Generator(const std::vector<int>& ops) : ops_(ops) {}
  virtual ~Generator() {}
  static const std::vector<int>& DefaultOps() { static std::vector<int> v{1, 2, 4}; return v; }
  static int created;
  int Generate(Mode m) {
    int s = 0;
    for (int o : ops_) s = m == kSum ? s + Handle(o) : (Handle(o) > s ? Handle(o) : s);
    return s;
  }
  virtual int Handle(int op) = 0;
 private:
  std::vector<int> ops_;
};
int Generator::created = 0;
}  // namespace gen

class Middle : public gen::Generator {
 public:
  using Ops = std::vector<int>;
  explicit Middle(const Ops& ops) : Generator(ops) {}
};

class Tester : public Middle {
 public:
  explicit Tester(const Ops& ops) : Middle(ops) { ++created; }
  int Handle(int op) override { return op * 10; }
};

int main() {
  Tester t(gen::Generator::DefaultOps());
  gen::Generator::Limits lim{0, 100};
  gen::Generator::Mode m = Middle::kMax;   // an inherited member, named through Middle
  Middle::Ops ops = Middle::DefaultOps();
  printf("sum=%d max=%d created=%d lim=%d..%d ops=%zu\n", t.Generate(gen::Generator::kSum),
         t.Generate(m), gen::Generator::created, lim.lo, lim.hi, ops.size());
  return 0;
}
