/* The library of the shared-library tests: globals of the traced type and a static
 * array of them, defined in the library. */
#ifndef SHLIB_H
#define SHLIB_H
#include "obj.h"
extern struct obj lib_one;
extern struct obj lib_two; /* never used by the library's own code */
struct obj *lib_slot(int i);
struct obj *lib_one_address(void);
void lib_op(int i);
#endif
