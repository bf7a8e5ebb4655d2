// Template mix-ins that implement a virtual interface; out-of-line template members.
#include <cstdio>

struct device {
    virtual int read(int reg) const = 0;
    virtual void write(int reg, int v) = 0;
    virtual const char* name() const { return "device"; }

protected:
    ~device() = default;
};

template <int N>
struct regfile : virtual device {
    int read(int reg) const override { return regs[reg % N]; }
    void write(int reg, int v) override;
    int regs[N] = {};
};

template <int N>
void regfile<N>::write(int reg, int v) {
    regs[reg % N] = v + N;
}

template <class Self>
struct logging : virtual device {
    void log(int reg) const {
        printf("%s[%d]=%d\n", name(), reg, read(reg));
    }
};

struct uart final : regfile<4>, logging<uart> {
    const char* name() const override { return "uart"; }
};

int main() {
    uart u;
    u.write(1, 10);
    u.write(6, 3);
    u.log(1);
    u.log(2);
    u.log(5);
    return 0;
}
