#include <cstdio>
#include <cstring>
#include "node.h"

#define OFF(f) static_cast<long>(reinterpret_cast<const char*>(&n.f) - \
                                 reinterpret_cast<const char*>(&n))

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--layout") == 0) {
        node n(0);
        std::printf("id_ %ld\nw_ %ld\nhits_ %ld\nkind_ %ld\nlast_ %ld\nkey_ %ld\nflag_ %ld\n"
                    "next_ %ld\nsizeof %zu\n", OFF(id_), OFF(w_), OFF(hits_), OFF(kind_),
                    OFF(last_), OFF(key_), OFF(flag_), OFF(next_), sizeof(node));
        return 0;
    }
    node* head = nullptr;
    for (int i = 0; i < 64; i++) {
        node* n = new node(i);
        n->key_ = i * 11;
        n->flag_ = static_cast<char>(i % 3);
        n->w_ = 100 - i;
        n->next_ = head;
        head = n;
    }
    long s = schedule(head, 50);
    std::printf("schedule %ld\n", s);
    std::printf("checksum %ld\n", checksum(s, head->score()));
    while (head) {
        node* next = head->next_;
        delete head;
        head = next;
    }
    return 0;
}
