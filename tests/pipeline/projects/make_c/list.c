#include <stdlib.h>
#include "item.h"

long list_total(int n) {
    struct item *head = 0;
    for (int i = 0; i < n; i++) {
        struct item *it = malloc(sizeof *it);
        item_init(it, i);
        it->next = head;
        head = it;
    }
    long t = 0;
    while (head) {
        struct item *next = head->next;
        t += item_score(head) * (head->flag ? 2 : 1);
        free(head);
        head = next;
    }
    return t;
}
