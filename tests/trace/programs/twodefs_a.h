/* The program's own `struct dict` (issue 27: two records with one tag). */
#include <stddef.h>

struct dict {
    void *type;
    long used;
    int rehashidx;
    int pause;
    char name[40];
};
