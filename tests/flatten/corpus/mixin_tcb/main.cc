// Paper 001, Fig. 1: a virtual interface base shared by configuration mix-ins.
#include <cstdio>

typedef unsigned long word_t;
class tcb;

class tcb_iface {
public:
    virtual void init() = 0;
    virtual word_t get_state() const = 0;
    virtual void set_state(word_t s) = 0;
    virtual void switch_to(tcb* dst) = 0;
    virtual word_t id() const = 0;

protected:
    ~tcb_iface() = default;
};

class base_tcb : public virtual tcb_iface {
public:
    base_tcb(word_t id) : myself(id) {}
    word_t get_state() const override { return state; }
    void set_state(word_t s) override { state = s; }
    word_t id() const override { return myself; }

protected:
    word_t myself;
    word_t state = 0;
    char name[5] = "none";
};

class arch_tcb : public virtual tcb_iface {
public:
    arch_tcb() { sp = 0x1000; }
    void init() override {
        sp += 16;
        printf("arch init sp=%lx\n", sp);
    }
    void switch_to(tcb* dst) override;

protected:
    word_t sp;
    unsigned char fpu_used = 0;
};

class api_tcb : public virtual tcb_iface {
public:
    void init() override {
        mr[0] = id() * 10;
        printf("api init mr0=%lu\n", mr[0]);
    }
    void send(tcb* to, word_t w);

protected:
    word_t mr[4] = {};
    unsigned short timeout = 7;
};

class tcb : public base_tcb, public arch_tcb, public api_tcb {
public:
    tcb(word_t id) : base_tcb(id) { init(); }
    void init() override {
        arch_tcb::init();
        api_tcb::init();
        set_state(1);
    }
    void dump() const {
        printf("tcb %lu state=%lu sp=%lx mr0=%lu mr1=%lu to=%u name=%s fpu=%u\n", myself,
               get_state(), sp, mr[0], mr[1], timeout, name, fpu_used);
    }
};

void arch_tcb::switch_to(tcb* dst) {
    printf("switch %lu -> %lu\n", id(), dst->id());
    sp -= 8;
    dst->set_state(2);
}

void api_tcb::send(tcb* to, word_t w) {
    to->set_state(3);
    printf("send %lu to %lu\n", w, to->id());
}

int main() {
    tcb a(1), b(2);
    a.switch_to(&b);
    a.send(&b, 42);
    a.dump();
    b.dump();
    tcb* p = &a;
    p->init();
    p->dump();
    return 0;
}
