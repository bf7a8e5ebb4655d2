#include "node.h"

long schedule(node* head, int rounds) {
    long total = 0;
    for (int r = 0; r < rounds; r++) {
        for (node* n = head; n; n = n->next_) {
            if ((n->id_ + r) % 4 == 0)
                n->touch(r);
            total += n->score() % 1009;
        }
    }
    return total;
}
