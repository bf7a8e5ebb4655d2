// Static members, member typedefs, enums and nested types of the bases.
#include <cstdio>

struct config {
    typedef unsigned short id_t;
    using count_t = long;
    enum mode { off, on, automatic };
    enum class level : char { low = 'l', high = 'h' };
    struct range { int lo, hi; };
    static int instances;
    static constexpr int max_ids = 8;
    static int next_id() { return ++instances; }
};
int config::instances = 0;

struct registry : config {
    id_t ids[max_ids] = {};
    count_t used = 0;
    range span{1, 3};
    mode m = automatic;
    level lv = level::high;
    void add() { ids[used++] = static_cast<id_t>(next_id()); }
};

struct table : registry {
    struct entry { id_t id; mode m; };
    entry first() const { return entry{ids[0], m}; }
};

int main() {
    table t;
    t.add();
    t.add();
    table::entry e = t.first();
    table::range r = t.span;
    printf("used=%ld first=%u mode=%d lv=%c range=%d..%d instances=%d max=%d\n", t.used,
           e.id, e.m, static_cast<char>(t.lv), r.lo, r.hi, table::instances, table::max_ids);
    printf("on=%d next=%d\n", table::on, table::next_id());
    return 0;
}
