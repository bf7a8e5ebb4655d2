/* Objects carved out of a bigger block (issue 27 item 2): traced types item, state and
 * rec; pool, LX and hdr are not traced.  No `allocators`.
 *  (a) a bump pool that mallocs one block and carves items from it with
 *      `(struct item *)(pool->base + pool->used)`, returned as `struct item *`; reset
 *      and carved again at the same addresses (registered once), then another item size
 *      carved across the old ones; the pool's block freed and its address reused by a
 *      block of bytes that is no object;
 *  (b) Lua's shape: `struct LX { char extra[8]; struct state l; }` from malloc(sizeof
 *      (struct LX)), used through `&lx->l`; freed, and the address reused by a block of
 *      bytes that is no object;
 *  (c) SQLite's shape: a header and a rec after it in one `void *` blob, the rec stored
 *      into the header's member with `(struct rec *)&z[ROUND8(sizeof(struct hdr))]`.
 * The untraced parts (the pool's bytes, LX's extra, the header, the reused block) are
 * touched inside invocations too and must not appear in the profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUND8(x) (((x) + 7) & ~(size_t)7)

struct item {      /* a@0 (4), b@4 (4), next@8 (8): 16 bytes */
    int a;
    int b;
    struct item *next;
};

struct pool {
    char *base;
    size_t used, cap;
};

static struct item *pool_take(struct pool *p)
{
    if (p->used + sizeof(struct item) > p->cap)
        return 0;
    size_t off = p->used;
    p->used += sizeof(struct item);
    return (struct item *)(p->base + off);
}

struct state {     /* top@0 (8), status@8 (4): 16 bytes */
    long top;
    int status;
};

struct LX {
    char extra[8];
    struct state l;
};

struct rec {       /* key@0 (8), val@8 (8) */
    long key;
    long val;
};

struct hdr {       /* untraced header of the blob */
    int kind;
    struct rec *rec;
};

__attribute__((noinline)) void use_item(struct item *it, struct pool *p)
{
    it->a = 1;          /* (0, 0, 4, w) */
    it->b = it->a + 1;  /* (0, 0, 4, r), (0, 4, 4, w) */
    p->cap += 0;        /* the pool is no traced object */
}

__attribute__((noinline)) void use_state(struct state *L, struct LX *lx)
{
    L->top = 5;         /* (0, 0, 8, w) */
    lx->extra[0] = 1;   /* LX's own bytes: nothing */
}

__attribute__((noinline)) void use_bytes(char *junk)
{
    memset(junk, 0, 8); /* a reused block, no object: nothing */
    junk[8] = 1;
    junk[12] = 2;
}

__attribute__((noinline)) void use_rec(struct hdr *h)
{
    h->kind = 3;                /* the header: nothing */
    h->rec->val = h->rec->key;  /* (0, 0, 8, r), (0, 8, 8, w) */
}

int main(void)
{
    /* (a) */
    struct pool P = {malloc(4096), 0, 4096};
    for (int round = 0; round < 2; round++) {
        P.used = 0;
        for (int i = 0; i < 3; i++)
            use_item(pool_take(&P), &P);
    }
    P.used = 8;         /* carved across the old items: they are stale */
    struct item *shifted;
    shifted = (struct item *)(P.base + P.used);
    use_item(shifted, &P);
    int shifted_b = shifted->b;
    free(P.base);       /* forgets the carved items */
    char *junk2 = malloc(4096); /* likely the pool's block again: no object any more */
    use_bytes(junk2);
    free(junk2);

    /* (b) */
    struct LX *lx = malloc(sizeof(struct LX));
    struct state *L = &lx->l;
    use_state(L, lx);
    free(lx);
    char *junk = malloc(24);    /* likely the same address: no object any more */
    use_bytes(junk);

    /* (c) */
    size_t n = ROUND8(sizeof(struct hdr)) + sizeof(struct rec) + 32;
    void *blob = malloc(n);
    struct hdr *h = blob;
    unsigned char *z = blob;
    h->rec = (struct rec *)&z[ROUND8(sizeof(struct hdr))];
    h->rec->key = 7;
    use_rec(h);
    printf("%d %ld %d\n", shifted_b, h->rec->val, junk[12]);
    free(junk);
    free(blob);
    return 0;
}
