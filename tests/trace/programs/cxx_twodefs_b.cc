/* The library's unit: another `Node` in an anonymous namespace with other members
 * (issue 27 item 4 for C++; cxx_twodefs_a.cc has the program's), one on the heap and one
 * global, each touched by the entry function op_b. */
#include <cstddef>
#include <cstdio>

namespace {
struct Node {
    void *table;
    unsigned long size;
    unsigned long used;
    void *privdata;
};

alignas(64) Node b_global; // at 0 mod 64 whatever else is linked
}

void op_b(Node *d)
{
    d->privdata = d;
    if (d->size == 7)
        std::puts("seven");
}

void *b_new()
{
    Node *d = new Node();
    d->size = 1;
    return d;
}

void b_use(void *p) { op_b(static_cast<Node *>(p)); }
void b_use_global() { op_b(&b_global); }
void b_free(void *p) { delete static_cast<Node *>(p); }

void b_layout()
{
    std::printf("b %zu %zu %zu %zu %zu\n", sizeof(Node), offsetof(Node, table),
                offsetof(Node, size), offsetof(Node, used), offsetof(Node, privdata));
}
