/* One header, two layouts of `struct rec` (issue 27: a fingerprint key): the units that
 * define REC_BIG before including it (samedef_lib.c) see 80 bytes, a@0, pad@8 (64),
 * b@72; the others (samedef_main.c) 16 bytes, a@0, b@8. Both definitions are at this
 * file's line of `struct rec`. */
#include <stddef.h>

struct rec {
    long a;
#ifdef REC_BIG
    char pad[64];
#endif
    long b;
};
