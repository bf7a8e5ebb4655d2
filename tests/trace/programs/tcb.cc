// C++: objects registered by constructors, new/delete, static storage and the stack.
#include <cstdio>
#include <new>

class tcb {
  public:
    long state;      // @0
    long partner;    // @8
    char pad[100];   // @16
    long queue;      // @120, sizeof 128
    tcb() { state = 0; partner = 0; queue = 0; }
    ~tcb() { state = -1; }
};

struct msg {         // no constructor: registered at new, forgotten at delete
    int a;
    int b;
};

__attribute__((noinline)) int ipc(tcb* from, tcb* to) {
    long p = from->partner;   // (0, 8, 8, r)
    to->state = p;            // (1, 0, 8, w)
    from->queue = 1;          // (0, 120, 8, w)
    return (int)to->queue;    // (1, 120, 8, r)
}

__attribute__((noinline)) int touch(msg* m) { return m->b; }   // (0, 4, 4, r)

tcb gtcb;
alignas(256) static unsigned char storage[2][256];

int main() {
    tcb* a = new tcb();
    tcb* b = new tcb;
    int s = 0;
    for (int i = 0; i < 3; ++i) s += ipc(a, b);
    s += ipc(b, &gtcb);
    {
        tcb local;
        s += ipc(&local, a);
    }
    tcb* p0 = new (storage[0]) tcb;
    tcb* p1 = new (storage[1]) tcb;
    s += ipc(p0, p1);
    p0->~tcb();
    p1->~tcb();
    msg* m = new msg{1, 2};
    s += touch(m);
    delete m;
    msg* ms = new msg[4];
    ms[3].b = 5;
    s += touch(&ms[3]);
    delete[] ms;
    delete a;
    delete b;
    std::printf("%d\n", s);
    return 0;
}
