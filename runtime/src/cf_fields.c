/* cf_fields.c - which field of a traced type each byte belongs to, and the field
 * footprint of a summary (issue 26: summaries of long invocations by what the layout
 * stage uses).
 *
 * The layout stage reduces every sequence to, per role, the set of movable units it
 * touches and the set it writes (a unit is a field, or the fields that share a bit-field
 * storage unit; bytes outside every field stay where they are): cachefit.layout.problem.
 * Two summaries of one kind of operation with the same per-role sets of touched and of
 * written fields therefore cost the same number of lines and dirty lines in every layout,
 * whichever bytes of those fields they touched and in whichever order; cf_core.c counts
 * them as one summary (their accesses' union, hits summed).  This file holds, per type,
 * a map from byte offset to field (from the blob's `fields` lines, which cachefit writes
 * from the DWARF layout it also writes as JSON), and computes a summary's footprint as
 * a sorted list of distinct tokens:
 *   - an access whose bytes all lie in fields: one token per field, role | mode | field
 *     index (size bits 0, which no access has);
 *   - an access with a byte in no field (padding, a fixed area, beyond the type's size):
 *     the access itself (role, offset, size, mode), so such bytes are compared exactly.
 * Both are finer than the layout's units, so equal footprints are equal for it.
 * It allocates only when a blob is read and when its scratch set must grow (never on the
 * per-access path), under the caller's lock.
 */
#define _GNU_SOURCE
#include "cf_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { CF_FIELDS_MAX_SIZE = 1 << 20 };

typedef struct cf_fieldmap {
    uint32_t size;  /* bytes mapped */
    uint16_t *map;  /* [size]: field index + 1, 0 in no field */
} cf_fieldmap;

static cf_fieldmap cf_fmaps[CF_MAX_TYPES];

static void *cf_fields_mmap(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A blob line's words after `fields TYPE`: "OFFSET:SIZE" per field, in declaration order.
 * The first map given for a type is kept (the executable's and its libraries' blobs
 * describe one layout per type).  Fields of size 0 (flexible array members) map nothing;
 * a byte of two fields (bit-fields sharing a byte) stays with the first: both are in one
 * unit for the layout stage. */
void cf_fields_load(int type, const char *s)
{
    if (type < 0 || type >= CF_MAX_TYPES || cf_fields_known((uint32_t)type))
        return;
    uint32_t size = 0, nfields = 0;
    for (const char *p = s; *p && *p != '\n';) {
        char word[64];
        p = cf_parse_word(p, word, sizeof word);
        if (!word[0])
            break;
        unsigned long long off = 0, len = 0;
        char *end;
        off = strtoull(word, &end, 10);
        if (*end != ':')
            return;
        len = strtoull(end + 1, &end, 10);
        if (*end || off + len > CF_FIELDS_MAX_SIZE)
            return;
        if (off + len > size)
            size = (uint32_t)(off + len);
        nfields++;
    }
    if (!size || nfields >= 0xffff)
        return;
    uint16_t *map = cf_fields_mmap((size_t)size * sizeof *map);
    if (!map)
        return;
    uint16_t idx = 0;
    for (const char *p = s; *p && *p != '\n';) {
        char word[64];
        p = cf_parse_word(p, word, sizeof word);
        if (!word[0])
            break;
        char *end;
        unsigned long long off = strtoull(word, &end, 10);
        unsigned long long len = strtoull(end + 1, &end, 10);
        idx++;
        for (unsigned long long b = off; b < off + len; b++)
            if (!map[b])
                map[b] = idx;
    }
    cf_fmaps[type].size = size;
    __atomic_store_n(&cf_fmaps[type].map, map, __ATOMIC_RELEASE); /* a library's, late */
}

int cf_fields_known(uint32_t type)
{
    return type < CF_MAX_TYPES && __atomic_load_n(&cf_fmaps[type].map, __ATOMIC_ACQUIRE);
}

/* The scratch set of distinct tokens: open addressing, empty slots ~0 (no token is:
 * role 0x7fff is never given). */
static uint64_t *cf_tokset;
static uint32_t cf_tokcap; /* slots, a power of two */

static int cf_tokset_room(uint32_t n)
{
    uint32_t want = 64;
    while (want < 2 * n && want < (1u << 30))
        want *= 2;
    if (want <= cf_tokcap)
        return 1;
    uint64_t *p = cf_fields_mmap((size_t)want * sizeof *p);
    if (!p)
        return 0;
    if (cf_tokset)
        munmap(cf_tokset, (size_t)cf_tokcap * sizeof *cf_tokset);
    memset(p, 0xff, (size_t)want * sizeof *p);
    cf_tokset = p;
    cf_tokcap = want;
    return 1;
}

static inline void cf_tok_add(uint64_t tok, uint64_t *out, uint32_t *n)
{
    uint32_t mask = cf_tokcap - 1;
    uint32_t h = (uint32_t)((tok * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    for (;;) {
        if (cf_tokset[h] == tok)
            return;
        if (cf_tokset[h] == ~(uint64_t)0) {
            cf_tokset[h] = tok;
            out[(*n)++] = tok;
            return;
        }
        h = (h + 1) & mask;
    }
}

static int cf_tok_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The footprint of the n quads q of `type` (a summary's distinct accesses) as sorted
 * distinct tokens in out (room for n): their number, or 0 when the type has no field map
 * or the scratch set cannot grow (then the caller keeps the summary as it is). */
uint32_t cf_fields_footprint(uint32_t type, const uint64_t *q, uint32_t n, uint64_t *out)
{
    if (!cf_fields_known(type) || !n || !cf_tokset_room(n))
        return 0;
    const cf_fieldmap *fm = &cf_fmaps[type];
    const uint64_t keep = ~(((uint64_t)1 << 48) - 1); /* role and mode */
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = q[i];
        uint32_t off = (uint32_t)x, size = (uint32_t)(x >> 32) & 0xffff;
        uint64_t last = (uint64_t)off + size - 1;
        uint32_t f0 = off < fm->size ? fm->map[off] : 0;
        uint32_t f1 = last < fm->size ? fm->map[last] : 0;
        if (f0 && f0 == f1) { /* fields are contiguous: every byte is in this one */
            cf_tok_add((x & keep) | f0, out, &k);
            continue;
        }
        int exact = !f0 || !f1;
        for (uint64_t b = off; !exact && b <= last; b++)
            exact = !fm->map[b];
        if (exact) {
            cf_tok_add(x, out, &k);
            continue;
        }
        for (uint64_t b = off; b <= last; b++)
            cf_tok_add((x & keep) | fm->map[b], out, &k);
    }
    /* Empty the set, only the slots used: each token is found by probing on past the
     * slots already emptied (it is in the set, so the probe ends). */
    for (uint32_t i = 0; i < k; i++) {
        uint32_t mask = cf_tokcap - 1;
        uint32_t h = (uint32_t)((out[i] * 0x9E3779B97F4A7C15ull) >> 32) & mask;
        while (cf_tokset[h] != out[i])
            h = (h + 1) & mask;
        cf_tokset[h] = ~(uint64_t)0;
    }
    qsort(out, k, sizeof *out, cf_tok_cmp);
    return k;
}
