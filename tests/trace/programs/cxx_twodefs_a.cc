/* The program's unit: its own `Node` in an anonymous namespace (issue 27 item 4 for C++:
 * one class name, two definitions; cxx_twodefs_b.cc has the other), on the heap from a
 * new-expression, touched by the entry function op_a. */
#include <cstddef>
#include <cstdio>

namespace {
struct Node {
    void *type;
    long used;
    int rehashidx;
    int pause;
    char name[40];
};
}

void *b_new();
void b_use(void *p);
void b_use_global();
void b_layout();
void b_free(void *p);

void op_a(Node *d)
{
    d->used = 1;
    if (d->rehashidx == 5)
        std::puts("five");
}

int main()
{
    Node *d = new Node();
    void *h = b_new();
    for (int i = 0; i < 3; i++)
        op_a(d);
    b_use(h);
    b_use(h);
    b_use_global();
    std::printf("a %zu %zu %zu %zu %zu\n", sizeof(Node), offsetof(Node, type),
                offsetof(Node, used), offsetof(Node, rehashidx), offsetof(Node, name));
    b_layout();
    delete d;
    b_free(h);
    return 0;
}
