/* The program's `struct rec` (issue 27 acceptance: two records with one tag): 80 bytes,
 * hits@0 (8), name@8 (56), last@64 (8), next@72 (8). */
#include <stddef.h>

struct rec {
    long hits;
    char name[56];
    long last;
    struct rec *next;
};
