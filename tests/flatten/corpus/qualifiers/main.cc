// const, noexcept, constexpr, inline, [[nodiscard]] and alignas are kept; virtual, override
// and final are dropped.
#include <cstdio>

struct limits_base {
    static constexpr int cap = 16;
    constexpr static int twice(int v) noexcept { return 2 * v; }
    [[nodiscard]] virtual int size() const noexcept { return n; }
    inline virtual bool full() const { return n >= cap; }
    virtual ~limits_base() noexcept = default;
    int n = 0;
    alignas(16) unsigned char bytes[4] = {1, 2, 3, 4};
};

struct ring final : limits_base {
    int size() const noexcept final { return n % cap; }
    bool push(int v) noexcept {
        if (full()) return false;
        data[n++] = v;
        return true;
    }
    int data[cap] = {};
};

int main() {
    ring r;
    for (int i = 0; i < 20; ++i) r.push(i * 3);
    constexpr int t = ring::twice(4);
    printf("size=%d full=%d twice=%d data5=%d b2=%u\n", r.size(), r.full(), t, r.data[5],
           r.bytes[2]);
    return 0;
}
