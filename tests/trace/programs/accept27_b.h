/* The library's `struct rec`: the same tag, other members (issue 27 acceptance): 96
 * bytes, len@0 (8), tag@8 (72), buf@80 (8), cap@88 (8). */
#include <stddef.h>

struct rec {
    unsigned long len;
    char tag[72];
    char *buf;
    unsigned long cap;
};
