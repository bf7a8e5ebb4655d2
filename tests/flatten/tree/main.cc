#include "tcb.h"
int main() {
    tcb a(1), b(2);
    a.set_state(5);
    printf("a: id=%d state=%d stack=%ld\n", a.id(), a.state(), a.stack());
    printf("b: id=%d state=%d stack=%ld\n", b.id(), b.state(), b.stack());
    return 0;
}
