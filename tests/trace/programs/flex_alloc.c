/* Lua's string objects: a record ending in a trailing array, allocated by a project
 * allocator with a size computed into a local variable first (lstring.c createstrobj:
 * `totalsize = sizelstring(l); o = luaC_newobj(L, tag, totalsize);`). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct str {
    struct str *next;
    unsigned char tt;
    unsigned char len;
    unsigned int hash;
    char contents[1];
} str;

#define sizestr(l) (offsetof(str, contents) + ((l) + 1) * sizeof(char))

void *newobj(int tag, size_t sz)
{
    (void)tag;
    return malloc(sz);
}

void freeobj(void *p)
{
    free(p);
}

__attribute__((noinline)) str *mkstr(const char *s, size_t l)
{
    size_t total;
    str *ts;
    total = sizestr(l);
    ts = newobj(4, total);
    ts->hash = 7;       /* (0, 12, 4, w) */
    ts->len = (unsigned char)l; /* (0, 9, 1, w) */
    memcpy(ts->contents, s, l + 1);
    return ts;
}

__attribute__((noinline)) unsigned hashof(str *ts)
{
    return ts->hash + ts->len; /* (0, 12, 4, r), (0, 9, 1, r) */
}

int main(void)
{
    str *a = mkstr("hello", 5);
    str *b = mkstr("", 0);
    unsigned h = hashof(a) + hashof(b);
    freeobj(a);
    freeobj(b);
    printf("%u\n", h);
    return 0;
}
