/* Lua's shape (issue 27): every collectable object starts with a common header; the
 * allocator returns the header type; its callers keep the result in a `struct hdr *` and
 * convert it to the object's own type through a union of all of them (Lua's gco2t:
 * `&((union GCUnion *)(o))->h`). Traced type: tab (str is not traced). No `allocators`.
 * Built with -DWRONG_SIZE, tab_new asks for sizeof(str) bytes: no tab may be registered.
 *
 * tab: next@0 (8), tt@8 (1), marked@9 (1), flags@10 (1), n@12 (4), sum@16 (8): 24 bytes.
 * Entry functions: tab_add, tab_sum, mark_all. */
#include <stdio.h>
#include <stdlib.h>

#define CommonHeader struct hdr *next; unsigned char tt; unsigned char marked

struct hdr { CommonHeader; };
typedef struct tab { CommonHeader; unsigned char flags; int n; long sum; } tab;
typedef struct str { CommonHeader; int len; char data[16]; } str;

union gc_union { struct hdr gc; tab h; str s; };

#define cast_u(o) ((union gc_union *)(o))
#define gco2t(o) (&((cast_u(o))->h))
#define gco2s(o) (&((cast_u(o))->s))

#ifdef WRONG_SIZE
#define TAB_SIZE sizeof(str)
#else
#define TAB_SIZE sizeof(tab)
#endif

static struct hdr *all;

/* the allocator: its size is a parameter, its result the header type */
__attribute__((noinline)) static struct hdr *newobj(unsigned char tt, size_t sz)
{
    struct hdr *o = (struct hdr *)malloc(sz);
    o->tt = tt;
    o->marked = 0;
    o->next = all;
    all = o;
    return o;
}

static tab *tab_new(void)
{
    struct hdr *o = newobj(1, TAB_SIZE);
    tab *t = gco2t(o);
    t->flags = 0;
    t->n = 0;
    t->sum = 0;
    return t;
}

static str *str_new(int len)
{
    struct hdr *o = newobj(2, sizeof(str));
    str *s = gco2s(o);
    s->len = len;
    return s;
}

__attribute__((noinline)) void tab_add(tab *t, long v)
{
    t->n++;
    t->sum += v;
}

__attribute__((noinline)) long tab_sum(tab *t)
{
    return t->sum;
}

/* a collector's pass: header accesses through `struct hdr *` (the str's are not traced) */
__attribute__((noinline)) void mark_all(void)
{
    for (struct hdr *o = all; o; o = o->next)
        o->marked = 1;
}

int main(void)
{
    tab *a = tab_new();
    tab *b = tab_new();
    str *s = str_new(5);
    tab_add(a, 3);
    tab_add(a, 4);
    tab_add(b, 5);
    mark_all();
    printf("%ld %ld %d\n", tab_sum(a), tab_sum(b), s->len);
    while (all) {
        struct hdr *next = all->next;
        free(all);
        all = next;
    }
    return 0;
}
