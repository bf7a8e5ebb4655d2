/* A profile-built shared library holding objects of the traced type in static storage. */
#include "shlib.h"

struct obj lib_one = {1, 0, 2, 3};
struct obj lib_two = {5, 0, 6, 7};
static struct obj lib_table[4] = {{10, 0, 0, 0}, {11, 0, 0, 0}, {12, 0, 0, 0}, {13, 0, 0, 0}};

struct obj *lib_slot(int i)
{
    return &lib_table[i];
}

/* Where the library's own code finds lib_one (the executable's copy under a copy
 * relocation). */
struct obj *lib_one_address(void)
{
    return &lib_one;
}

/* An entry function in the library: (0, 16, 1, r) on lib_one, (1, 16, 1, w) on the slot. */
__attribute__((noinline)) void lib_op(int i)
{
    char c = lib_one.c;
    lib_table[i].c = c;
}
