/* item.h - the record every unit of the make_c test project uses. */
#ifndef ITEM_H
#define ITEM_H
#include <stddef.h>

struct item {
    char tag;
    double weight;
    int count;
    char flag;
    long id;
    struct item *next;
};

void item_init(struct item *it, long id);
long item_score(const struct item *it);
#endif
