#include <stdio.h>
#include <string.h>
#include "item.h"

long list_total(int n);

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--layout") == 0) {
        printf("tag %zu\nweight %zu\ncount %zu\nflag %zu\nid %zu\nnext %zu\nsizeof %zu\n",
               offsetof(struct item, tag), offsetof(struct item, weight),
               offsetof(struct item, count), offsetof(struct item, flag),
               offsetof(struct item, id), offsetof(struct item, next), sizeof(struct item));
        return 0;
    }
    struct item it = {.id = 0};
    item_init(&it, 41);
    printf("score %ld\n", item_score(&it));
    printf("total %ld\n", list_total(1000));
    return 0;
}
