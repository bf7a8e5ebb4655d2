#include "tcb.h"

tcb::tcb(int id) : arch_tcb(4096L * id), id_(id) { init(); }

void tcb::init() {
    arch_tcb::init();
    printf("tcb %d init\n", id_);
}
