/* A library's `struct dict`: the same tag, other members (hiredis beside Redis). */

struct dict {
    char **table;
    unsigned long size;
    unsigned long used;
    void *privdata;
};
