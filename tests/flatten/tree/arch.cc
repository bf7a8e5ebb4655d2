#include "arch.h"

arch_tcb::arch_tcb(long sp) : sp_(sp) { printf("arch ctor %ld\n", sp); }

void arch_tcb::init() {
    sp_ -= 16;
    set_state(1);
    printf("arch init sp=%ld state=%d\n", sp_, state());
}
