// C++ records for the front-end comparison tests (tests/frontend/test_corpus_layouts.py).
//
// Only type definitions: the tests include this file in a generated probe program that prints
// sizeof/alignof, member offsets, base-subobject offsets and bit positions, compile it with g++
// and clang++, and compare the figures with what cachefit's front ends read. Records with
// non-public members or bases befriend `cachefit_probe` so the probe can take their addresses;
// friendship does not change a layout. Add a new record to CXX_RECORDS in the test too.
#include <cstddef>
#include <cstdint>

struct cachefit_probe;

namespace kern {
struct tcb {
    int pid;
    void *stack;
    unsigned state : 3;
    unsigned prio : 5;
};
}  // namespace kern

namespace user {
struct tcb {  // same name as kern::tcb, different layout: lookups of "tcb" are ambiguous
    long tid;
    char name[16];
};
}  // namespace user

namespace ns {

template <class T, int N>
struct ring {
    T buf[N];
    unsigned head;
    unsigned tail;
};

template <class K, class V>
struct pair2 {
    K key;
    V value;
};

// Single inheritance, and a derived class placed in a non-POD base's tail padding.
struct base_a {
    int a;
    char ca;
};
struct base_b {
    double b;
};
struct single : base_a {
    short s;
};
class np_base {
  public:
    np_base() {}
    int a;
    char b;
};
struct tail_reuse : np_base {
    char c;
};

// Multiple inheritance.
struct multi : base_a, base_b {
    int z;
};

// Dynamic classes.
struct shape {
    virtual ~shape() {}
    double x;
};
struct circle : shape {
    double r;
};
struct mixin {
    virtual void hook() {}
    int m;
};
struct fancy : base_a, shape, mixin {  // shape becomes the primary base, at offset 0
    char f;
};

// Virtual inheritance: a diamond over a dynamic root, a non-dynamic virtual base,
// and a nearly empty virtual base that becomes the primary base.
struct vb_root {
    virtual ~vb_root() {}
    long id;
};
struct vb_left : virtual vb_root {
    int l;
};
struct vb_right : virtual vb_root {
    int r;
};
struct vb_diamond : vb_left, vb_right {
    int d;
};
struct vplain {
    int v;
};
struct vderived : virtual vplain {
    char c;
};
struct iface {
    virtual void f() {}
};
struct impl : virtual iface {
    int w;
};
struct vmore : vderived, virtual base_b {
    short q;
};

// Empty bases and members.
struct empty_a {};
struct empty_b {};
struct ebo : empty_a, empty_b {
    int x;
};
struct ebo_conflict : empty_a {
    empty_a m;
    int x;
};
struct nua {
    [[no_unique_address]] empty_a e;
    int x;
    [[no_unique_address]] empty_b f;
};

// Access control.
class account {
    friend struct ::cachefit_probe;
    int id;

  protected:
    double balance;

  public:
    char tag;

  private:
    short pin;
    union {
        int code;
        float weight;
    };
};
class priv_derived : private base_a, protected base_b {
    friend struct ::cachefit_probe;
    int q;
};

// Alignment.
struct alignas(64) cl_aligned {
    int counter;
};
struct alignas_member {
    char c;
    alignas(32) int x;
    char y;
};

// Nested records.
struct outer {
    struct inner {
        int a;
        short b;
    };
    inner in;
    inner arr[2];
    char c;
    ring<int, 16> *rp;
};

// Anonymous members and a typedef'd anonymous struct.
struct variant {
    int kind;
    union {
        int i;
        double d;
        struct {
            short lo;
            short hi;
        };
    };
};
typedef struct {
    int a;
    char b;
} pod_t;

// Templates used as bases and members.
template <class T>
struct node_base {
    T *next;
    T *prev;
};
struct list_node : node_base<list_node> {
    int val;
};
struct holder {
    ring<double, 4> r;
    pair2<char, long> p;
};
template <class T>
struct counted : empty_a, shape {  // an instantiation with bases and a vtable pointer
    T n;
};

// Bit-fields of C++ types.
enum class level : std::uint8_t { low, mid, high };
struct pixel {
    level lvl : 2;
    bool lit : 1;
    std::uint16_t x : 12;
    std::uint16_t y : 12;
};

struct with_static {
    static int count;
    int x;
    static const int limit = 4;
};

}  // namespace ns

namespace {
struct hidden {
    int h;
    char c;
};
}  // namespace
