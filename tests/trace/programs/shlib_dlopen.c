/* Loads the library with dlopen, uses its objects, unloads it, then maps fresh memory at
 * the addresses its objects had and runs the same operation there: the runtime must
 * have forgotten them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include "obj.h"

__attribute__((noinline)) void op(struct obj *x, struct obj *y)
{
    int v = y->a;
    x->b = v;
}

static int recycle(uintptr_t a)
{
    uintptr_t page = a & ~(uintptr_t)4095;
    void *p = mmap((void *)page, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    return p == (void *)page || munmap(p, 4096) != 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "./libshobj.so";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    struct obj *one = dlsym(h, "lib_one");
    struct obj *(*slot)(int) = (struct obj * (*)(int)) dlsym(h, "lib_slot");
    void (*lib_op)(int) = (void (*)(int))dlsym(h, "lib_op");
    struct obj *two = slot(2);
    for (int i = 0; i < 3; i++)
        op(one, two);          /* ((0, 0, 4, r), (1, 8, 8, w)) three times */
    lib_op(1);                 /* ((0, 16, 1, r), (1, 16, 1, w)) */
    printf("loaded %ld %d\n", one->b, slot(1)->c);
    uintptr_t a1 = (uintptr_t)one, a2 = (uintptr_t)two;
    dlclose(h);
    int ok = recycle(a1);
    if ((a1 >> 12) != (a2 >> 12))
        ok = ok && recycle(a2);
    if (!ok) {
        printf("recycled: no\n");
        return 0;
    }
    for (int i = 0; i < 5; i++)
        op((struct obj *)a1, (struct obj *)a2); /* fresh memory: nothing to record */
    printf("recycled: yes %ld\n", ((struct obj *)a1)->b);
    return 0;
}
