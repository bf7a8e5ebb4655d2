#include "item.h"

void item_init(struct item *it, long id) {
    it->tag = (char)('a' + id % 26);
    it->weight = (double)id * 0.5;
    it->count = (int)id * 3;
    it->flag = (char)(id & 1);
    it->id = id;
    it->next = 0;
}

long item_score(const struct item *it) {
    return it->id * 7 + it->count + (long)it->weight + it->tag + it->flag;
}
