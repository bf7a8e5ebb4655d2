/* The block search of cachefit/layout (block_search.py builds its input, block_native.py
 * calls it with ctypes): best-first (A*) and threshold searches of the granule relaxation,
 * with a proven bound at any node budget. Queue key (f, -g, seq), children in a fixed
 * order, duplicate, dominance and re-queue rules; options that change the order of the
 * expansions, not the meaning of the results: partial expansion, group bounds, and in a
 * dirty search the lines oracle. docs/layout.md ("Exact search for unaligned objects",
 * "Native search") has the states, the bounds and why the results are proven. Every
 * search ends on counts (nodes, states kept), never on a clock.
 *
 * It does not build item types, judge layouts or choose budgets (block_search.py and
 * block_native.py do), and it never prints. Memory: every state queued is kept;
 * `max_states` caps them, and reaching the cap ends the search like the node budget, with
 * the bound of the state being expanded. Built when cachefit is installed (pyproject.toml,
 * the cachefit.layout._cf_block_search extension).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_PER_KEY 64
#define VISITS_PER_NODE 6             /* bound evaluations a threshold search's node pays */
/* A threshold group is asked only while its expansions stay within GROUP_RATIO times its
 * search's plus GROUP_SLACK (why: bench/solver/RESULTS.md, "Tuning constants"). */
#define GROUP_RATIO 4
#define GROUP_SLACK 50000
/* A threshold lines search asks halfway between its proven bound and its limit while their
 * gap is above 1/BISECT_GAP of the limit and at most 1/BISECT_FAR of it (docs/layout.md,
 * "Bisection"; why these values: bench/solver/RESULTS.md, "Tuning constants"). */
#define BISECT_GAP 64
#define BISECT_FAR 8

typedef struct {
    int32_t nt, nfp, g, k;
    const int32_t *size, *align, *counts0;
    const int32_t *fidx_start, *fidx; /* type t: fidx[fidx_start[t] .. fidx_start[t+1]) */
    const int64_t *weight;
    const uint8_t *ages0;             /* 0 for footprints with no bytes left */
    int32_t cmod0, mp, mq;            /* mp, mq: -1 when there is no mirror pair */
    int64_t g0, limit;
    int64_t floor_lines, floor_scale; /* floor_scale 0: no floor */
    int64_t max_nodes, max_states;
    int32_t partial;                  /* 1: partial expansion (below); 0: every child at once */
    /* Group bounds (ngroups 0: none): group j is footprints gfp[gstart[j] .. gstart[j+1]);
     * its value is the exact optimum of the relaxation projected onto it (pieces in none
     * of its footprints dropped), memoised; at most group_cap programme states a group. */
    int32_t ngroups;
    const int32_t *gstart, *gfp;
    int64_t group_cap;
    /* oracle != 0 (a dirty search, floor given; the first nlines footprints are the
     * lines ones): a child is dropped when the lines oracle (below) proves that it cannot
     * reach floor_lines lines; the oracle expands at most oracle_cap states (counted as
     * nodes, with its group programmes'), after which it lets every child through. */
    int32_t nlines;
    int32_t oracle;
    int64_t oracle_cap;
    /* nest >= 3: a group asked by threshold with at least nest footprints is bounded by a
     * threshold group of its heaviest half (its footprints come heaviest first), and so on
     * down; 0: groups have no groups of their own. */
    int32_t nest;
    /* orc (a dirty search with the oracle): a lines oracle made by cf_oracle_open for this
     * search, whose memo (from cf_oracle_lines, the lines search) it goes on with;
     * NULL: it builds its own. */
    void *orc;
    /* natural != 0 (objects aligned to the line, K = 1; the pieces include the cold
     * ones, with no footprints): every piece starts at the first offset its alignment
     * allows after the previous one, as C places members, so the search is over the
     * declaration orders themselves. The group bounds still drop the pieces outside
     * their footprints and may start a piece at the next granule boundary: that
     * programme's value is then the relaxation's, below every natural completion's
     * (docs/layout.md, "Cache-aligned objects"). 0: the granule relaxation. */
    int32_t natural;
    /* lo > 0: the caller's proven lower bound on the least cost of the layouts that
     * matter, in the search's costs (cf_oracle_lines: lines; a dirty search: floor_lines *
     * floor_scale plus dirty lines), from another relaxation (the line models', for
     * cache-aligned objects). A layout at most lo ends the search as optimal; a lines
     * search also asks it first (a dirty search does not: asked the line models' dirty
     * bound first, 60 / 40 seed 5, which has no layout there, spent its whole budget on
     * that question instead of finding better layouts); 0: none. */
    int64_t lo;
} cf_bs_input;

enum { CF_BS_FOUND = 0, CF_BS_NONE = 1, CF_BS_NODES = 2, CF_BS_STATES = 3,
       CF_BS_NOMEM = -1 };

typedef struct {
    int32_t status, path_len;
    int64_t cost, bound, expanded, queued;
    int32_t *path;                    /* capacity: the pieces (sum of counts0) */
} cf_bs_output;

/* ---- growable arrays: room for index `need` in an array of `*cap` elements of `size`
 * bytes, doubling (from 4096); the array itself, or NULL when out of memory (then `a` and
 * `*cap` are unchanged) ---- */
static void *grow(void *a, size_t *cap, size_t need, size_t size)
{
    if (need < *cap)
        return a;
    size_t c = *cap ? *cap : 4096;
    while (c <= need)
        c *= 2;
    void *p = realloc(a, c * size);
    if (p)
        *cap = c;
    return p;
}

/* ---- byte-keyed hash set over a fixed-stride arena ---- */
typedef struct {
    uint8_t *arena;
    size_t stride, n, cap_items;
    uint64_t *slots;                  /* (id + 1) | hash's high half << 32; 0 empty */
    size_t nslots;
} keyset;

/* Keys are zero-padded to whole words (`stride` is a multiple of 8). */
static uint64_t hash_words(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
}

/* Whether keys a and b (n bytes, whole words) are equal. */
static int same_key(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return 0;
    }
    return 1;
}

static int keyset_init(keyset *s, size_t stride)
{
    s->stride = stride;
    s->n = 0;
    s->cap_items = 1024;
    s->nslots = 2048;
    s->arena = malloc(s->cap_items * stride);
    s->slots = calloc(s->nslots, sizeof(uint64_t));
    return s->arena && s->slots ? 0 : -1;
}

static void keyset_free(keyset *s)
{
    free(s->arena);
    free(s->slots);
}

static int keyset_grow(keyset *s)
{
    size_t nslots = s->nslots * 2;
    uint64_t *slots = calloc(nslots, sizeof(uint64_t));
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->nslots; i++) {
        uint64_t v = s->slots[i];
        if (!v)
            continue;
        size_t id = (uint32_t)v - 1;
        size_t j = hash_words(s->arena + id * s->stride, s->stride) & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = v;
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    return 0;
}

/* The id of `key` (stride bytes, zero-padded), adding it when `add` (then *added = 1);
 * -1 when absent (or no memory). */
static int64_t keyset_find(keyset *s, const uint8_t *key, int add, int *added)
{
    uint64_t h = hash_words(key, s->stride);
    uint64_t tag = h & 0xffffffff00000000ULL;
    size_t j = h & (s->nslots - 1);
    *added = 0;
    for (;;) {
        uint64_t v = s->slots[j];
        if (!v)
            break;
        if ((v & 0xffffffff00000000ULL) == tag) {
            size_t id = (uint32_t)v - 1;
            if (same_key(s->arena + id * s->stride, key, s->stride))
                return (int64_t)id;
        }
        j = (j + 1) & (s->nslots - 1);
    }
    if (!add)
        return -1;
    if (s->n + 1 >= UINT32_MAX)
        return -1;
    uint8_t *a = grow(s->arena, &s->cap_items, s->n, s->stride);
    if (!a)
        return -1;
    s->arena = a;
    memcpy(s->arena + s->n * s->stride, key, s->stride);
    s->slots[j] = (uint64_t)(s->n + 1) | tag;
    s->n++;
    *added = 1;
    if (s->n * 10 > s->nslots * 7 && keyset_grow(s))
        return -1;
    return (int64_t)(s->n - 1);
}

/* ---- the queue: a binary heap ordered by (f, -g, seq) ---- */
typedef struct {
    int64_t f, g;
    int64_t done;                     /* partial expansion: children of value <= done queued */
    uint32_t seq, id;
    int32_t ref, move;                /* ref: parent expansion * 2 + full flag */
    int32_t me;                       /* its expansion, -1 before the first */
} entry;

typedef struct {
    entry *a;
    size_t n, cap;
} heap;

static int before(const entry *x, const entry *y)
{
    if (x->f != y->f)
        return x->f < y->f;
    if (x->g != y->g)
        return x->g > y->g;
    return x->seq < y->seq;
}

static int heap_push(heap *h, entry e)
{
    entry *a = grow(h->a, &h->cap, h->n, sizeof(entry));
    if (!a)
        return -1;
    h->a = a;
    size_t i = h->n++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
    return 0;
}

static entry heap_pop(heap *h)
{
    entry top = h->a[0];
    entry last = h->a[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h->a[c + 1], &h->a[c]))
            c++;
        if (!before(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (n)
        h->a[i] = last;
    return top;
}

/* ---- growable int32 arrays (expansions' parents and moves) ---- */
typedef struct {
    int32_t *a;
    size_t n, cap;
} ivec;

static int ivec_push(ivec *v, int32_t x)
{
    int32_t *a = grow(v->a, &v->cap, v->n, sizeof(int32_t));
    if (!a)
        return -1;
    v->a = a;
    v->a[v->n++] = x;
    return 0;
}

/* ---- dominance memo: per (counts, cursor) up to MEMO_PER_KEY (distances, cost) ---- */
typedef struct {
    int64_t g;
    int32_t next;                     /* next entry of the same key, -1 at the end */
} memo_entry;

typedef struct {
    keyset keys;                      /* (counts, cursor) */
    int32_t *head, *count;            /* per key id */
    size_t cap_keys;
    memo_entry *e;
    uint8_t *ages;                    /* per entry, nfp bytes */
    size_t n, cap;
} memo;

static int memo_add(memo *m, int64_t key_id, const uint8_t *ages, size_t nfp, int64_t g)
{
    size_t old = m->cap_keys, cap_count = m->cap_keys, cap_e = m->cap;
    int32_t *h = grow(m->head, &m->cap_keys, (size_t)key_id, sizeof(int32_t));
    if (!h)
        return -1;
    m->head = h;
    int32_t *c = grow(m->count, &cap_count, (size_t)key_id, sizeof(int32_t));
    if (!c)
        return -1;
    m->count = c;
    for (size_t i = old; i < m->cap_keys; i++) {
        m->head[i] = -1;
        m->count[i] = 0;
    }
    memo_entry *e = grow(m->e, &cap_e, m->n, sizeof(memo_entry));
    if (!e)
        return -1;
    m->e = e;
    uint8_t *a = grow(m->ages, &m->cap, m->n, nfp ? nfp : 1);
    if (!a)
        return -1;
    m->ages = a;
    size_t i = m->n++;
    m->e[i].g = g;
    m->e[i].next = m->head[key_id];
    memcpy(m->ages + i * nfp, ages, nfp);
    m->head[key_id] = (int32_t)i;
    m->count[key_id]++;
    return 0;
}

/* An expanded state with the same counts and cursor, cost c1 and distances a, makes this
 * one (distances b, cost g) useless when c1 + sum_F w_F max(0, a_F - b_F) <= g. */
static int dominated(const memo *m, int64_t key_id, const uint8_t *ages, size_t nfp,
                     int64_t g, const int64_t *weight)
{
    for (int32_t i = m->head[key_id]; i >= 0; i = m->e[i].next) {
        int64_t slack = g - m->e[i].g;
        if (slack < 0)
            continue;
        const uint8_t *old = m->ages + (size_t)i * nfp;
        size_t f;
        for (f = 0; f < nfp; f++) {
            if (old[f] > ages[f]) {
                slack -= weight[f] * (old[f] - ages[f]);
                if (slack < 0)
                    break;
            }
        }
        if (f == nfp)
            return 1;
    }
    return 0;
}

/* ---- the search ---- */
typedef struct {
    int32_t o, sg, g1, ncmod, v, c;
    int64_t extra;
} move;

typedef struct {
    const cf_bs_input *in;
    int32_t nt, nfp, g, k;
    uint8_t *member;                  /* member[t * nfp + i]: type t is in footprint i */
    uint64_t *memmask;                /* the same as a bit mask per type (nfp <= 64) */
    move *moves;                      /* per (type, cursor) up to 2 */
    int32_t *nmoves;
    int32_t *wait;                    /* per type: granules a whole-granule piece (aligned
                                       * to g, at least g bytes) fills, else 0 */
    /* penalty_masks' types, in increasing order: per cursor cmod, sharers[sharers_start[cmod]
     * .. sharers_start[cmod + 1]) those that can share the next granule (at 0 those with
     * wait 0, elsewhere those that can start in the cursor's granule), and waiters[0 ..
     * nwaiters) those with a wait */
    int32_t *sharers, *sharers_start, *waiters, nwaiters;
    int32_t gshift;                   /* g = 1 << gshift */
    int64_t floor_base;               /* floor_lines * floor_scale, 0 without a floor */
    double inv_scale;
} search;

/* The dirty search's bound v = l * M + d (d < M) raised to max(l, L) * M + d', where d'
 * is the dirty part of `sep`, a bound made of separate per-footprint terms only (the
 * cost so far and the per-footprint bound): each dirty term there bounds its footprint's
 * dirty lines whatever the lines, so L * M + d' bounds every completion, since each has
 * at least L lines. The dirty part of v itself may not: the next-granule penalty and the
 * groups take a least option over lines and dirty terms together, and a completion with
 * more lines (still at least L) may have fewer dirty lines than that option. */
static int64_t lift(const search *s, int64_t v, int64_t sep)
{
    if (!s->floor_base || v >= s->floor_base)
        return v;
    int64_t m = s->in->floor_scale;
    int64_t lines = (int64_t)((double)sep * s->inv_scale);  /* sep / M, then corrected */
    while (lines > 0 && lines * m > sep)
        lines--;
    while ((lines + 1) * m <= sep)
        lines++;
    return s->floor_base + (sep - lines * m);
}

static int32_t align_up(int32_t x, int32_t a)
{
    return (x + a - 1) / a * a;
}

/* The per-footprint bound (block_search._Search.base_bound); open[i] = 1 for footprints
 * touched at distance 1..K-1 with bytes left. */
/* Each footprint's bytes in the pieces left (`counts` per item type). */
static void bytes_left(const cf_bs_input *in, const uint8_t *counts, int64_t *left)
{
    for (int32_t i = 0; i < in->nfp; i++)
        left[i] = 0;
    for (int32_t t = 0; t < in->nt; t++)
        if (counts[t])
            for (int32_t j = in->fidx_start[t]; j < in->fidx_start[t + 1]; j++)
                left[in->fidx[j]] += (int64_t)counts[t] * in->size[t];
}

static int64_t base_bound_except(const search *s, const int64_t *left, const uint8_t *ages,
                                 int32_t cmod, uint8_t *open, const uint8_t *skip)
{
    /* locals: the stores to open[] (bytes) could alias anything the loop reads */
    const int64_t *weight = s->in->weight;
    int32_t g = s->g, room = cmod ? g - cmod : 0, nfp = s->nfp, shift = s->gshift, k = s->k;
    int64_t total = 0;
    for (int32_t i = 0; i < nfp; i++) {
        int64_t b = left[i];
        int32_t a = ages[i];
        uint8_t op = 0;
        if (b && !(skip && skip[i])) {
            if (!a) {
                if (b > room)
                    total += weight[i] * ((b - room + g - 1) >> shift);
            } else {
                total += weight[i] * (a + ((b + g - 1) >> shift) - 1);
                op = a < k;
            }
        }
        open[i] = op;
    }
    return total;
}

/* base_bound's term for footprint i with b > 0 bytes left at distance a, `room` bytes
 * free in the cursor's granule. */
static int64_t bound_term(const search *s, int32_t i, int64_t b, int32_t a, int32_t room)
{
    int32_t g = s->g;
    if (!a)
        return b > room ? s->in->weight[i] * ((b - room + g - 1) >> s->gshift) : 0;
    return s->in->weight[i] * (a + ((b + g - 1) >> s->gshift) - 1);
}

static int64_t base_bound(const search *s, const int64_t *left, const uint8_t *ages,
                          int32_t cmod, uint8_t *open)
{
    return base_bound_except(s, left, ages, cmod, open, NULL);
}

/* The open footprints `open` (bytes) as a bit mask (at most 64 of them). */
static uint64_t open_mask(const uint8_t *open, int32_t nfp)
{
    uint64_t openm = 0;
    for (int32_t i = 0; i < nfp; i++)
        openm |= (uint64_t)open[i] << i;
    return openm;
}

/* `penalty` with the footprints as bit masks (at most 64 of them; `openm` the open ones):
 * the same value, the least of the same options, taken from the type lists; as no option
 * is below 0, one of 0 ends the search. */
static int64_t penalty_masks(const search *s, uint64_t openm, int32_t cmod,
                             const uint8_t *counts, const uint8_t *ages)
{
    const int64_t *weight = s->in->weight;
    int32_t k = s->k;
    if (!openm)
        return 0;
    int64_t best = -1;
    int has_share = 0;
    uint64_t sharem = 0;
    for (int32_t j = s->sharers_start[cmod]; j < s->sharers_start[cmod + 1]; j++) {
        int32_t t = s->sharers[j];
        if (counts[t]) {
            sharem |= s->memmask[t];
            has_share = 1;
        }
    }
    if (has_share || cmod) {
        int64_t rest = 0;
        for (uint64_t x = openm & ~sharem; x; x &= x - 1)
            rest += weight[__builtin_ctzll(x)];
        if (!rest)
            return 0;
        best = rest;
    }
    if (!cmod) {
        for (int32_t j = 0; j < s->nwaiters && best; j++) {
            int32_t t = s->waiters[j], wait = s->wait[t];
            if (!counts[t])
                continue;
            int64_t cost = 0;
            for (uint64_t x = openm & ~s->memmask[t]; x; x &= x - 1) {
                int32_t i = __builtin_ctzll(x), a = ages[i];
                cost += weight[i] * ((a + wait < k ? a + wait : k) - a);
            }
            if (best < 0 || cost < best)
                best = cost;
        }
    }
    return best > 0 ? best : 0;
}

/* block_search._Search._next_granule_penalty. */
static int64_t penalty(const search *s, const uint8_t *open, int32_t cmod,
                       const uint8_t *counts, const uint8_t *ages, uint8_t *share)
{
    const cf_bs_input *in = s->in;
    int32_t g = s->g, k = s->k, nfp = s->nfp;
    if (s->memmask)
        return penalty_masks(s, open_mask(open, nfp), cmod, counts, ages);
    int any_open = 0;
    for (int32_t i = 0; i < nfp; i++) {
        share[i] = 0;
        any_open |= open[i];
    }
    if (!any_open)
        return 0;
    int64_t best = -1;
    int has_share = 0;
    for (int32_t t = 0; t < s->nt; t++) {
        if (!counts[t])
            continue;
        const uint8_t *mem = s->member + (size_t)t * nfp;
        if (cmod) {
            if (align_up(cmod, in->align[t]) < g) {   /* it can start in this granule */
                for (int32_t i = 0; i < nfp; i++)
                    share[i] |= mem[i];
                has_share = 1;
            }
        } else if (s->wait[t]) {
            int32_t wait = s->wait[t];
            int64_t cost = 0;
            for (int32_t i = 0; i < nfp; i++) {
                if (open[i] && !mem[i]) {
                    int32_t a = ages[i];
                    cost += in->weight[i] * ((a + wait < k ? a + wait : k) - a);
                }
            }
            if (best < 0 || cost < best)
                best = cost;
        } else {
            for (int32_t i = 0; i < nfp; i++)
                share[i] |= mem[i];
            has_share = 1;
        }
    }
    if (has_share || cmod) {
        int64_t rest = 0;
        for (int32_t i = 0; i < nfp; i++)
            if (open[i] && !share[i])
                rest += in->weight[i];
        if (best < 0 || rest < best)
            best = rest;
    }
    return best > 0 ? best : 0;
}

/* A search over `in`: its sizes, granule shift, dirty floor, and move tables (-1 when
 * out of memory; `s` must start zeroed, and search_free releases it either way). */
static int search_init(search *s, const cf_bs_input *in)
{
    s->in = in;
    s->nt = in->nt;
    s->nfp = in->nfp;
    s->g = in->g;
    s->k = in->k;
    while ((1 << s->gshift) < in->g)
        s->gshift++;
    if (in->floor_scale) {
        s->floor_base = in->floor_lines * in->floor_scale;
        s->inv_scale = 1.0 / (double)in->floor_scale;
    }
    int32_t g = s->g, nt = s->nt, nfp = s->nfp;
    s->member = calloc((size_t)nt * (nfp ? nfp : 1), 1);
    s->moves = calloc((size_t)nt * g * 2, sizeof(move));
    s->nmoves = calloc((size_t)nt * g, sizeof(int32_t));
    s->wait = calloc((size_t)nt + 1, sizeof(int32_t));
    if (!s->member || !s->moves || !s->nmoves || !s->wait)
        return -1;
    if (nfp <= 64) {
        s->memmask = calloc((size_t)nt + 1, sizeof(uint64_t));
        if (!s->memmask)
            return -1;
    }
    for (int32_t t = 0; t < nt; t++) {
        int64_t wt = 0;
        for (int32_t j = in->fidx_start[t]; j < in->fidx_start[t + 1]; j++) {
            s->member[(size_t)t * nfp + in->fidx[j]] = 1;
            if (s->memmask)
                s->memmask[t] |= (uint64_t)1 << in->fidx[j];
            wt += in->weight[in->fidx[j]];
        }
        s->wait[t] = in->align[t] >= g && in->size[t] >= g ? in->size[t] / g : 0;
        for (int32_t cmod = 0; cmod < g; cmod++) {
            int32_t starts[2], ns = 0;
            if (!cmod) {
                starts[ns++] = 0;
            } else {
                int32_t o = align_up(cmod, in->align[t]);
                if (o < g || in->natural)
                    starts[ns++] = o;   /* natural: o may be g, the only start */
                if (!in->natural)
                    starts[ns++] = g;
            }
            for (int32_t j = 0; j < ns; j++) {
                int32_t o = starts[j], end = o + in->size[t];
                int32_t sg = o / g, eg = (end - 1) / g, g1 = end / g, ncmod = end % g;
                int32_t room = ncmod ? g - ncmod : 0;
                move *m = &s->moves[((size_t)t * g + cmod) * 2 + j];
                m->o = o;
                m->sg = sg;
                m->g1 = g1;
                m->ncmod = ncmod;
                m->v = g1 - eg;
                m->c = in->size[t] + room - g + 1;
                m->extra = wt * (eg - sg);
            }
            s->nmoves[(size_t)t * g + cmod] = ns;
        }
    }
    s->sharers = calloc((size_t)nt * g + 1, sizeof(int32_t));
    s->sharers_start = calloc((size_t)g + 1, sizeof(int32_t));
    s->waiters = calloc((size_t)nt + 1, sizeof(int32_t));
    if (!s->sharers || !s->sharers_start || !s->waiters)
        return -1;
    int32_t n = 0;
    for (int32_t cmod = 0; cmod < g; cmod++) {
        s->sharers_start[cmod] = n;
        for (int32_t t = 0; t < nt; t++)
            if (cmod ? align_up(cmod, in->align[t]) < g : !s->wait[t])
                s->sharers[n++] = t;
    }
    s->sharers_start[g] = n;
    for (int32_t t = 0; t < nt; t++)
        if (s->wait[t])
            s->waiters[s->nwaiters++] = t;
    return 0;
}

static void search_free(search *s)
{
    free(s->member);
    free(s->memmask);
    free(s->moves);
    free(s->nmoves);
    free(s->sharers);
    free(s->sharers_start);
    free(s->waiters);
    free(s->wait);
}

/* ---- depth-first programmes over a projection (the group bounds, the lines oracle): the
 * projected input and its search, and per depth the children of the state expanded ---- */
typedef struct {
    cf_bs_input pin;
    search ps;
    size_t stride;                    /* a projected state, zero-padded to words */
    int32_t maxdepth;
    uint8_t *kids, *open, *share, *proj;
    int64_t *kadd, *kest, *kh, *left, *kleft;  /* kleft: each child's bytes left */
    uint64_t *kopen;
    int32_t *order, *kmove;           /* kmove: the child's move, type * 256 + its start */
    const move **kmv;
    /* per expansion (programme_children), per footprint: what its next granule costs at
     * its distance (wa0) or one more (wa1), and base_bound's term for its further granules
     * (wc, 0 without bytes left); the footprints with bytes left at distance 0 (fresh);
     * per distance d <= K the weight of the footprints with bytes left at d (wd, the
     * distance capped at K) and (nfp <= 64) those with bytes left below d (below[d]) */
    int64_t *wa0, *wa1, *wc, *wd;
    int32_t *fresh, nfresh;
    uint64_t *below;
    /* per slot (slot_total), base_bound's value for a child as if its piece held none of
     * the footprints: slot g1 (1..max_g1) for the moves that advance the cursor by g1
     * granules, max_g1 + ncmod for those that leave it at ncmod */
    int32_t max_g1, nslot;
    int64_t epoch;                    /* expansions so far: a slot is valid for the one it
                                       * was computed for */
    int64_t *slot_epoch, *slot_total;
    int64_t wcsum, staysum;           /* per expansion: the sum of wc; of base_bound's terms
                                       * at a distance of at least 1 */
} programme;

/* The children of one expansion: kids[order[0..n)] by increasing kest (cost + bound), each
 * with its move (kmv, kmove), its move's cost kadd, its per-footprint bound kh
 * (base_bound's value) and open footprints kopen (a mask; nfp <= 64 only). busy: they
 * have pieces left (all or none, since each places one piece). The children themselves
 * (kids, kleft: their bytes left) are written by programme_child, from the state expanded
 * (st, left), when they are needed. */
typedef struct {
    uint8_t *kids;
    int64_t *kadd, *kest, *kh, *kleft;    /* kleft: nfp + 1 per child */
    uint64_t *kopen;
    int32_t *order, *kmove;
    const move **kmv;
    int32_t n, busy;
    const uint8_t *st;
    const int64_t *left;
} children;

/* Slot `slot` of the expansion of `st` (`left`: its footprints' bytes left), for move m:
 * base_bound's value for its child as if the piece held none of the footprints. With g1
 * > 0, each footprint with bytes left goes to distance min(a + g1, K) and pays
 * wd-weighted; with g1 0 the distances stay, and the fresh footprints pay their bytes past
 * the room left in the granule. */
static int64_t slot_total(programme *pr, int32_t slot, const int64_t *left, const move *m)
{
    const search *s = &pr->ps;
    int32_t k = s->k, g = s->g, g1 = m->g1;
    if (pr->slot_epoch[slot] == pr->epoch)
        return pr->slot_total[slot];
    int64_t total;
    if (g1) {
        total = pr->wcsum;
        for (int32_t d = 0; d <= k; d++)
            total += pr->wd[d] * (d + g1 < k ? d + g1 : k);
    } else {
        int32_t room = g - m->ncmod;
        total = pr->staysum;
        for (int32_t f = 0; f < pr->nfresh; f++) {
            int32_t i = pr->fresh[f];
            if (left[i] > room)
                total += s->in->weight[i] * ((left[i] - room + g - 1) >> s->gshift);
        }
    }
    pr->slot_total[slot] = total;
    pr->slot_epoch[slot] = pr->epoch;
    return total;
}

/* The child of the expanded state (`ages`, `left`: its footprints' distances and bytes
 * left) that places a piece of type t by move m, from its slot's value `total`: its
 * per-footprint bound (base_bound's value) to *h and its open footprints to *openm (nfp <=
 * 64); returns the cost the move adds. Only the piece's footprints differ from the slot:
 * each pays for the granule where the piece starts (wa0, or wa1 when it starts at the
 * next one), and then has distance v, or 0 with no bytes left, and the term
 * (left - m->c) >> gshift instead of the slot's: ceil((rest - room) / g) for rest bytes
 * left and the room the move leaves, which is base_bound's term at distance 1 (room 0),
 * at distance 0, and without bytes left (the best-first search's form). */
static int64_t child_bound(const programme *pr, const uint8_t *ages, const int64_t *left,
                           int32_t t, const move *m, int64_t total, int64_t *h,
                           uint64_t *openm)
{
    const search *s = &pr->ps;
    const int64_t *weight = s->in->weight, *wc = pr->wc, *was = m->sg ? pr->wa1 : pr->wa0;
    const int32_t *fidx = s->in->fidx;
    int32_t k = s->k, g = s->g, size = s->in->size[t], shift = s->gshift;
    int32_t mc = m->c, g1 = m->g1, room = m->ncmod ? g - m->ncmod : 0;
    int64_t add = m->extra, bound = total;
    uint64_t om = 0;
    if (s->memmask) {
        /* the slot's open footprints: with bytes left, below K after the move, not 0 */
        uint64_t so = g1 ? (g1 < k ? pr->below[k - g1] : 0) : pr->below[k] & ~pr->below[1];
        om = m->v && m->v < k ? so | s->memmask[t] : so & ~s->memmask[t];
    }
    for (int32_t j = s->in->fidx_start[t]; j < s->in->fidx_start[t + 1]; j++) {
        int32_t i = fidx[j], a = !g1 ? ages[i] : ages[i] + g1 < k ? ages[i] + g1 : k;
        add += was[i];
        bound += weight[i] * ((left[i] - mc) >> shift);
        if (a)                            /* the slot's term (its bytes left are not 0) */
            bound -= weight[i] * a + wc[i];
        else if (left[i] > room)
            bound -= weight[i] * ((left[i] - room + g - 1) >> shift);
        if (left[i] == size && s->memmask)
            om &= ~((uint64_t)1 << i);    /* its last bytes: distance 0, not open */
    }
    *h = bound;
    *openm = om;
    return add;
}

/* Child x of `ch`, written to its place in kids and kleft; with `open`, its open
 * footprints as bytes there. A footprint's distance grows by g1 (capped at K) or stays,
 * and is v for the piece's footprints; 0 without bytes left. */
static uint8_t *programme_child(const programme *pr, const children *ch, int32_t x,
                                uint8_t *open)
{
    /* locals: the stores to c[] (bytes) could alias anything the loops read */
    const search *s = &pr->ps;
    const move *m = ch->kmv[x];
    const uint8_t *st = ch->st, *ages = st + s->nt + 1;
    const int64_t *left = ch->left;
    const int32_t *fidx = s->in->fidx;
    int32_t nt = s->nt, nfp = s->nfp, k = s->k, g1 = m->g1, t = ch->kmove[x] >> 8;
    int32_t size = s->in->size[t], j1 = s->in->fidx_start[t + 1];
    uint8_t v = (uint8_t)m->v, *c = ch->kids + (size_t)x * pr->stride, *cages = c + nt + 1;
    int64_t *cleft = ch->kleft + (size_t)x * (nfp + 1);
    memcpy(c, st, nt);
    c[t]--;
    c[nt] = (uint8_t)m->ncmod;
    memcpy(cleft, left, (size_t)nfp * sizeof(int64_t));
    for (int32_t i = 0; i < nfp; i++) {
        int32_t a = ages[i] + g1 < k ? ages[i] + g1 : k;
        cages[i] = (uint8_t)(!left[i] ? 0 : g1 ? a : ages[i]);
    }
    for (int32_t j = s->in->fidx_start[t]; j < j1; j++) {
        int32_t i = fidx[j];
        cleft[i] -= size;
        cages[i] = cleft[i] ? v : 0;
    }
    if (open)
        for (int32_t i = 0; i < nfp; i++)
            open[i] = cages[i] && cages[i] < k;
    return c;
}

static void programme_free(programme *pr)
{
    search_free(&pr->ps);
    free(pr->kids);
    free(pr->kadd);
    free(pr->kest);
    free(pr->order);
    free(pr->kmove);
    free(pr->left);
    free(pr->kleft);
    free(pr->kh);
    free(pr->kopen);
    free(pr->kmv);
    free(pr->open);
    free(pr->share);
    free(pr->proj);
    free(pr->wa0);
    free(pr->wa1);
    free(pr->wc);
    free(pr->wd);
    free(pr->fresh);
    free(pr->below);
    free(pr->slot_epoch);
    free(pr->slot_total);
}

/* A programme over nt item types and nfp footprints (granule and starts of `in`), with
 * room for `pieces` moves, natural placement or not (cf_bs_input.natural); 0, or -1 out
 * of memory (`pr` must start zeroed). */
static int programme_init(programme *pr, const cf_bs_input *in, int32_t nt, int32_t nfp,
                          const int32_t *size, const int32_t *align, const int32_t *counts,
                          const int32_t *fstart, const int32_t *fidx, const int64_t *weight,
                          int32_t pieces, int32_t natural)
{
    cf_bs_input *p = &pr->pin;
    p->natural = natural;
    p->nt = nt;
    p->nfp = nfp;
    p->g = in->g;
    p->k = in->k;
    p->size = size;
    p->align = align;
    p->counts0 = counts;
    p->fidx_start = fstart;
    p->fidx = fidx;
    p->weight = weight;
    p->mp = p->mq = -1;
    if (search_init(&pr->ps, p))
        return -1;
    pr->maxdepth = pieces + 2;
    pr->stride = ((size_t)nt + 1 + nfp + 7) / 8 * 8;
    size_t nk = (size_t)2 * nt + 2, nf = (size_t)nfp + 1;
    pr->kids = calloc((size_t)pr->maxdepth * nk, pr->stride);
    pr->kadd = calloc((size_t)pr->maxdepth * nk, sizeof(int64_t));
    pr->kest = calloc((size_t)pr->maxdepth * nk, sizeof(int64_t));
    pr->order = calloc((size_t)pr->maxdepth * nk, sizeof(int32_t));
    pr->kmove = calloc((size_t)pr->maxdepth * nk, sizeof(int32_t));
    pr->left = calloc((size_t)pr->maxdepth * nf, sizeof(int64_t));
    pr->kleft = calloc((size_t)pr->maxdepth * nk * nf, sizeof(int64_t));
    pr->kh = calloc((size_t)pr->maxdepth * nk, sizeof(int64_t));
    pr->kopen = calloc((size_t)pr->maxdepth * nk, sizeof(uint64_t));
    pr->kmv = calloc((size_t)pr->maxdepth * nk, sizeof(move *));
    pr->open = calloc(nf, 1);
    pr->share = calloc(nf, 1);
    pr->proj = calloc(pr->stride, 1);
    pr->max_g1 = 1;
    for (int32_t t = 0; t < nt; t++)
        if (size[t] / in->g + 1 > pr->max_g1)
            pr->max_g1 = size[t] / in->g + 1;
    pr->nslot = pr->max_g1 + 1 + in->g;
    pr->wa0 = calloc(nf, sizeof(int64_t));
    pr->wa1 = calloc(nf, sizeof(int64_t));
    pr->wc = calloc(nf, sizeof(int64_t));
    pr->wd = calloc((size_t)in->k + 1, sizeof(int64_t));
    pr->fresh = calloc(nf, sizeof(int32_t));
    pr->below = calloc((size_t)in->k + 2, sizeof(uint64_t));
    pr->slot_epoch = calloc(pr->nslot, sizeof(int64_t));
    pr->slot_total = calloc(pr->nslot, sizeof(int64_t));
    return pr->kids && pr->kadd && pr->kest && pr->order && pr->kmove && pr->kmv && pr->left &&
           pr->kleft && pr->kh && pr->kopen && pr->open && pr->share && pr->proj && pr->wa0 &&
           pr->wa1 && pr->wc && pr->wd && pr->fresh && pr->below && pr->slot_epoch &&
           pr->slot_total ? 0 : -1;
}

/* The footprints' bytes left in state `st`, kept for its depth. */
static int64_t *programme_left(programme *pr, const uint8_t *st, int32_t depth)
{
    int64_t *left = pr->left + (size_t)depth * (pr->ps.nfp + 1);
    bytes_left(pr->ps.in, st, left);
    return left;
}

/* The children of `st` (bytes left `left`), each with the cost its move adds, its
 * per-footprint bound and open footprints, and that cost plus the bound, ordered by the
 * latter. With `with_penalty`, that sum holds the next-granule penalty too, and the
 * children are written (programme_child) as they are made. */
static children programme_children(programme *pr, const uint8_t *st, const int64_t *left,
                                   int32_t depth, int with_penalty)
{
    const search *s = &pr->ps;
    int32_t nt = s->nt, g = s->g, cmod = st[nt];
    size_t nk = (size_t)2 * nt + 2, nf = (size_t)s->nfp + 1;
    children ch = {pr->kids + (size_t)depth * nk * pr->stride, pr->kadd + (size_t)depth * nk,
                   pr->kest + (size_t)depth * nk, pr->kh + (size_t)depth * nk,
                   pr->kleft + (size_t)depth * nk * nf, pr->kopen + (size_t)depth * nk,
                   pr->order + (size_t)depth * nk, pr->kmove + (size_t)depth * nk,
                   pr->kmv + (size_t)depth * nk, 0, 0, st, left};
    /* locals: ch's address is taken (programme_child), so its fields would be reloaded */
    int64_t *kadd = ch.kadd, *kest = ch.kest, *kh = ch.kh;
    uint64_t *kopen = ch.kopen;
    int32_t *order = ch.order, *kmove = ch.kmove, n = 0;
    const move **kmv = ch.kmv;
    int32_t mp = s->in->mp, mq = s->in->mq, nfp = s->nfp, k = s->k, pieces = 0;
    const uint8_t *ages = st + nt + 1;
    int masks = s->memmask != NULL;
    uint64_t *below = pr->below;
    for (int32_t d = 0; d <= k; d++) {
        pr->wd[d] = 0;
        below[d + 1] = 0;
    }
    pr->nfresh = 0;
    pr->wcsum = pr->staysum = 0;
    for (int32_t i = 0; i < nfp; i++) {
        int64_t w = s->in->weight[i];
        int32_t a = ages[i];
        pr->wa0[i] = w * a;
        pr->wa1[i] = w * (a < k ? a + 1 : k);
        pr->wc[i] = 0;
        if (!left[i])
            continue;
        pr->wc[i] = w * (((left[i] + g - 1) >> s->gshift) - 1);
        pr->wcsum += pr->wc[i];
        pr->wd[a < k ? a : k] += w;
        if (a)
            pr->staysum += w * a + pr->wc[i];
        else
            pr->fresh[pr->nfresh++] = i;
        if (masks)                        /* below[d + 1]: those at d, for now */
            below[(a < k ? a : k) + 1] |= (uint64_t)1 << i;
    }
    below[0] = 0;
    for (int32_t d = 1; d <= k; d++)
        below[d] |= below[d - 1];
    pr->epoch++;
    for (int32_t t = 0; t < nt; t++) {
        pieces += st[t];
        if (!st[t] || (t == mq && st[mp]))
            continue;             /* q only after p (the mirrored layouts have p after q) */
        int32_t nm = s->nmoves[(size_t)t * g + cmod];
        for (int32_t j = 0; j < nm; j++) {
            const move *m = &s->moves[((size_t)t * g + cmod) * 2 + j];
            int32_t slot = m->g1 ? m->g1 : pr->max_g1 + m->ncmod;
            int64_t h;
            int64_t add = child_bound(pr, ages, left, t, m, slot_total(pr, slot, left, m), &h,
                                      &kopen[n]);
            kadd[n] = add;
            kh[n] = h;
            kmove[n] = t * 256 + m->o;
            kmv[n] = m;
            if (with_penalty) {
                uint8_t *c = programme_child(pr, &ch, n, masks ? NULL : pr->open);
                h += masks ? penalty_masks(s, kopen[n], m->ncmod, c, c + nt + 1)
                           : penalty(s, pr->open, m->ncmod, c, c + nt + 1, pr->share);
            }
            kest[n] = add + h;
            order[n] = n;
            n++;
        }
    }
    ch.n = n;
    ch.busy = pieces > 1;
    /* by kest; natural placement: among equal ones, the moves that end on a granule
     * boundary first (a question answered yes is answered sooner when its layouts fill
     * the line: seed 5 of 60 / 40 cache-aligned, 3.9 -> 2.9 M nodes to its first layout
     * at the line models' bound) */
    int natural = s->in->natural;
    for (int32_t i = 1; i < n; i++) {
        int32_t x = order[i], j = i;
        while (j > 0 && (kest[order[j - 1]] > kest[x] ||
                         (natural && kest[order[j - 1]] == kest[x] &&
                          kmv[order[j - 1]]->ncmod && !kmv[x]->ncmod))) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    return ch;
}

/* What a threshold query needs of its state besides the state itself, and the expansion
 * that made it already has (programme_children's values for a child): its footprints'
 * bytes left, its per-footprint bound h (base_bound's value), its open footprints (a mask;
 * nfp <= 64 only) and whether it has pieces left; and what is found of it on the way, to
 * be found once: h with the next-granule penalty (known_bound's), and its memo entry in
 * the threshold programme asked (-1 none, -2 not looked up yet). */
typedef struct {
    const int64_t *left;
    int64_t h;
    uint64_t open;
    int busy;
    int64_t bound;                    /* -1 until known_bound computes it */
    int64_t id;
} known;

/* `known` of state `st` of `pr` computed (`left`: its bytes left, or NULL to compute them
 * in the programme's buffer at `depth`; `busy`: whether it has pieces left, or -1 to find
 * out). */
static known programme_known(programme *pr, const uint8_t *st, int32_t depth,
                             const int64_t *left, int busy)
{
    const search *s = &pr->ps;
    int32_t nt = s->nt;
    known kn = {left ? left : programme_left(pr, st, depth), 0, 0, busy, -1, -2};
    kn.h = base_bound(s, kn.left, st + nt + 1, st[nt], pr->open);
    if (s->memmask)
        kn.open = open_mask(pr->open, s->nfp);
    if (busy < 0) {
        kn.busy = 0;
        for (int32_t t = 0; t < nt; t++)
            kn.busy |= st[t] != 0;
    }
    return kn;
}

/* `known` of child x of an expansion. */
static known child_known(const programme *pr, const children *ch, int32_t x)
{
    known kn = {ch->kleft + (size_t)x * (pr->ps.nfp + 1), ch->kh[x], ch->kopen[x], ch->busy,
                -1, -2};
    return kn;
}

/* The per-footprint bound of state `st` of `pr` (`kn` its known values) plus its
 * next-granule penalty (kept in kn). */
static int64_t known_bound(programme *pr, const uint8_t *st, known *kn)
{
    const search *s = &pr->ps;
    int32_t nt = s->nt, cmod = st[nt];
    const uint8_t *ages = st + nt + 1;
    if (kn->bound >= 0)
        return kn->bound;
    if (s->memmask) {
        kn->bound = kn->h + penalty_masks(s, kn->open, cmod, st, ages);
    } else {
        /* more than 64 footprints: the open ones as bytes, computed again */
        int64_t h = base_bound(s, kn->left, ages, cmod, pr->open);
        kn->bound = h + penalty(s, pr->open, cmod, st, ages, pr->share);
    }
    return kn->bound;
}

/* ---- group bounds: the exact optimum of the relaxation projected onto a few footprints
 * (bench/solver/group_bound.py has the argument: deleting the pieces that hold none of
 * the group's footprints from any completion leaves the group's granules no worse, so
 * the projected optimum bounds what the group pays; disjoint groups add). Two ways to use
 * one: its exact value, from a memoised programme over the same normal form, its moves
 * tried by increasing cost + bound and cut when that reaches the best value found, so the
 * memoised values stay exact (the best-first searches); or, in the lines oracle, a
 * threshold programme (below) asked whether the group can pay at most what is left. ---- */
struct group;

/* ---- threshold programmes (the lines oracle, and its groups): whether the least future
 * cost of a projected state is at most a budget b, by a memoised depth-first search that
 * keeps per state a proven lower bound (lb) and a found cost (ub), uses dominance between
 * states with the same pieces and cursor, and optionally the threshold groups of its
 * footprints as a further bound. docs/layout.md, "The lines oracle", has the argument. */
typedef struct {
    programme *pr;
    keyset keys;
    int64_t *lb, *ub;                 /* per state: proven lower bound, cost found */
    size_t cap_lb, cap_ub;
    int64_t nodes, visits, cap;       /* visits: states whose bound was computed */
    /* dominance: per (counts, cursor), up to MEMO_PER_KEY states with those */
    keyset ck;
    int32_t *chead, *ccount, *cnext;
    size_t cap_chead, cap_ccount, cap_cnext;
    uint8_t *ckbuf;
    /* the groups bounding it (threshold programmes themselves), or none */
    struct group *gr;
    int32_t ngroups;
    uint8_t *ingroup;
    int64_t *gfloor;                  /* per group: what it pays at least, this state */
    known *gknown;                    /* per group: its projection's, this state */
    int64_t max_keys;                 /* states kept at most; 0: no limit */
    int stop;                         /* why a query returned -1 (CF_BS_*), 0 not yet */
    /* a dirty search's lines oracle (the threshold dirty search), or NULL: a state whose
     * future lines the oracle proves above b / oscale costs more than b */
    struct oracle *orc;
    int64_t oscale;
} thresh;

typedef struct group {
    programme pr;
    int32_t *psize, *palign, *pcounts, *pstart, *pidx, *tmap;
    int32_t *mapped, nmapped;         /* the types with a projected type (tmap[t] >= 0) */
    int64_t *pweight;
    keyset keys;
    int64_t *val;                     /* per key; -1 while being computed */
    size_t cap_vals;
    int64_t nodes, cap;
    int dead;                         /* the cap was reached: the group is not used */
    int threshold;                    /* asked by `th` (the oracle's), not by value */
    thresh th;
    int32_t sub_start[2], *sub_fp;    /* `th`'s own group (the nest rule), if any */
} group;

static int thresh_init(thresh *o, programme *pr, int64_t cap);
static void thresh_free(thresh *o);
static int thresh_groups(thresh *o, int32_t ngroups, const int32_t *gstart, const int32_t *gfp,
                         int64_t cap, int32_t nest);
struct oracle;
static int oracle_within(struct oracle *o, const uint8_t *c, int64_t lines, int64_t *lb);
static int64_t oracle_nodes(const struct oracle *o);
static void oracle_limit(struct oracle *o, int64_t room);

static int group_init(group *o, const cf_bs_input *in, int32_t j, int threshold)
{
    memset(o, 0, sizeof(*o));
    int32_t n = in->gstart[j + 1] - in->gstart[j];
    const int32_t *gfp = in->gfp + in->gstart[j];
    int32_t nt = in->nt;
    o->tmap = malloc((size_t)nt * sizeof(int32_t));
    o->mapped = malloc((size_t)nt * sizeof(int32_t));
    o->psize = calloc((size_t)nt + 1, sizeof(int32_t));
    o->palign = calloc((size_t)nt + 1, sizeof(int32_t));
    o->pcounts = calloc((size_t)nt + 1, sizeof(int32_t));
    o->pstart = calloc((size_t)nt + 2, sizeof(int32_t));
    o->pidx = calloc((size_t)nt * n + 1, sizeof(int32_t));
    int32_t *pmask = calloc((size_t)nt + 1, sizeof(int32_t));
    o->pweight = calloc((size_t)n + 1, sizeof(int64_t));
    if (!o->tmap || !o->mapped || !o->psize || !o->palign || !o->pcounts || !o->pstart ||
        !o->pidx || !pmask || !o->pweight) {
        free(pmask);
        return -1;
    }
    int32_t pnt = 0;
    for (int32_t t = 0; t < nt; t++) {
        int32_t mask = 0;
        for (int32_t q = in->fidx_start[t]; q < in->fidx_start[t + 1]; q++)
            for (int32_t l = 0; l < n; l++)
                if (in->fidx[q] == gfp[l])
                    mask |= 1 << l;
        o->tmap[t] = -1;
        if (!mask)
            continue;
        int32_t pt;
        for (pt = 0; pt < pnt; pt++)
            if (o->psize[pt] == in->size[t] && o->palign[pt] == in->align[t] && pmask[pt] == mask)
                break;
        if (pt == pnt) {
            o->psize[pt] = in->size[t];
            o->palign[pt] = in->align[t];
            pmask[pt] = mask;
            pnt++;
        }
        o->pcounts[pt] += in->counts0[t];
        o->tmap[t] = pt;
        o->mapped[o->nmapped++] = t;
    }
    int32_t q = 0;
    for (int32_t pt = 0; pt < pnt; pt++) {
        o->pstart[pt] = q;
        for (int32_t l = 0; l < n; l++)
            if (pmask[pt] >> l & 1)
                o->pidx[q++] = l;
    }
    o->pstart[pnt] = q;
    free(pmask);
    for (int32_t l = 0; l < n; l++)
        o->pweight[l] = in->weight[gfp[l]];
    int32_t pieces = 0;
    for (int32_t pt = 0; pt < pnt; pt++) {
        if (o->pcounts[pt] > 255)
            return -1;
        pieces += o->pcounts[pt];
    }
    if (programme_init(&o->pr, in, pnt, n, o->psize, o->palign, o->pcounts, o->pstart,
                       o->pidx, o->pweight, pieces, 0) ||
        keyset_init(&o->keys, o->pr.stride))
        return -1;
    o->cap = in->group_cap;
    o->threshold = threshold;
    if (threshold && thresh_init(&o->th, &o->pr, in->group_cap))
        return -1;
    if (threshold && in->nest >= 3 && n >= in->nest) {
        /* the nest rule: the group's programme is a relaxation like the search's, so a
         * group of its footprints bounds it as groups bound the search */
        int32_t half = (n + 1) / 2;
        o->sub_fp = malloc((size_t)half * sizeof(int32_t));
        if (!o->sub_fp)
            return -1;
        for (int32_t l = 0; l < half; l++)
            o->sub_fp[l] = l;
        o->sub_start[0] = 0;
        o->sub_start[1] = half;
        if (thresh_groups(&o->th, 1, o->sub_start, o->sub_fp, in->group_cap, in->nest))
            return -1;
    }
    return 0;
}

static void group_free(group *o)
{
    if (o->threshold)
        thresh_free(&o->th);
    programme_free(&o->pr);
    keyset_free(&o->keys);
    free(o->val);
    free(o->tmap);
    free(o->mapped);
    free(o->psize);
    free(o->palign);
    free(o->pcounts);
    free(o->pstart);
    free(o->pidx);
    free(o->pweight);
    free(o->sub_fp);
}

/* The group's least future cost from a projected state (bytes left `left`); -1 when the
 * cap is reached. */
static int64_t group_value(group *o, const uint8_t *st, int32_t depth, const int64_t *left)
{
    int32_t nt = o->pr.ps.nt;
    int any = 0;
    for (int32_t t = 0; t < nt; t++)
        any |= st[t] != 0;
    if (!any)
        return 0;
    int added = 0;
    int64_t id = keyset_find(&o->keys, st, 1, &added);
    if (id < 0)
        return -1;
    if (added) {
        int64_t *v = grow(o->val, &o->cap_vals, (size_t)id, sizeof(int64_t));
        if (!v)
            return -1;
        o->val = v;
        o->val[id] = -1;
    } else if (o->val[id] >= 0) {
        return o->val[id];
    }
    if (o->nodes >= o->cap || depth + 1 >= o->pr.maxdepth)
        return -1;
    o->nodes++;
    children ch = programme_children(&o->pr, st, left, depth, 1);
    int64_t best = INT64_MAX;
    for (int32_t j = 0; j < ch.n; j++) {
        int32_t x = ch.order[j];
        if (ch.kest[x] >= best)
            break;                            /* no smaller value below: exact minimum */
        int64_t v = group_value(o, ch.kids + (size_t)x * o->pr.stride, depth + 1,
                                ch.kleft + (size_t)x * (o->pr.ps.nfp + 1));
        if (v < 0)
            return -1;
        if (ch.kadd[x] + v < best)
            best = ch.kadd[x] + v;
    }
    o->val[id] = best;
    return best;
}

/* Group j's projection of a state of `in` (pieces left, cursor, distances), in its `proj`;
 * *busy (unless NULL): whether it has pieces left. */
static uint8_t *group_project(group *o, const cf_bs_input *in, int32_t j,
                              const uint8_t *counts, int32_t cmod, const uint8_t *ages,
                              int *busy)
{
    int32_t pnt = o->pr.ps.nt, n = o->pr.ps.nfp;
    uint8_t *proj = o->pr.proj, any = 0;
    memset(proj, 0, o->pr.stride);
    for (int32_t q = 0; q < o->nmapped; q++) {
        int32_t t = o->mapped[q];
        proj[o->tmap[t]] += counts[t];
        any |= counts[t];
    }
    if (busy)
        *busy = any != 0;
    proj[pnt] = (uint8_t)cmod;
    const int32_t *gfp = in->gfp + in->gstart[j];
    for (int32_t l = 0; l < n; l++)
        proj[pnt + 1 + l] = ages[gfp[l]];
    return proj;
}

/* A group reaches its cap: it dies, its footprints go back to the per-footprint terms. */
static void group_kill(group *o, const cf_bs_input *in, int32_t j, uint8_t *ingroup)
{
    o->dead = 1;
    for (int32_t q = in->gstart[j]; q < in->gstart[j + 1]; q++)
        ingroup[in->gfp[q]] = 0;
}

/* A projected type keeps its size, so each of group j's footprints keeps its bytes left
 * (`left`, of the whole state): into the group programme's buffer at depth 0. */
static const int64_t *group_left(group *o, const cf_bs_input *in, int32_t j,
                                 const int64_t *left)
{
    int64_t *gleft = o->pr.left;
    for (int32_t q = in->gstart[j], l = 0; q < in->gstart[j + 1]; q++, l++)
        gleft[l] = left[in->gfp[q]];
    return gleft;
}

/* The live groups' exact bound for a state (bytes left `left`); -1 when one reaches its
 * cap (this state: the plain bound). */
static int64_t groups_value(group *gr, int32_t ngroups, const cf_bs_input *in,
                            const uint8_t *counts, int32_t cmod, const uint8_t *ages,
                            const int64_t *left, uint8_t *ingroup)
{
    int64_t total = 0;
    for (int32_t j = 0; j < ngroups; j++) {
        group *o = &gr[j];
        if (o->dead)
            continue;
        int64_t v = group_value(o, group_project(o, in, j, counts, cmod, ages, NULL), 0,
                                group_left(o, in, j, left));
        if (v < 0) {
            group_kill(o, in, j, ingroup);
            return -1;
        }
        total += v;
    }
    return total;
}

/* The groups of `in` (gstart, gfp, group_cap over its own types and footprints) and the
 * footprints they hold, asked by value or (`threshold`) by threshold programmes; 0, or -1
 * out of memory (then groups_free releases what was made). */
static int groups_init(const cf_bs_input *in, group **gr, int32_t *ngroups, uint8_t **ingroup,
                       int threshold)
{
    *gr = NULL;
    *ngroups = 0;
    *ingroup = NULL;
    if (in->ngroups <= 0)
        return 0;
    *gr = calloc(in->ngroups, sizeof(group));
    *ingroup = calloc(in->nfp ? in->nfp : 1, 1);
    if (!*gr || !*ingroup)
        return -1;
    for (; *ngroups < in->ngroups; (*ngroups)++) {
        if (group_init(&(*gr)[*ngroups], in, *ngroups, threshold)) {
            group_free(&(*gr)[*ngroups]);
            return -1;
        }
        for (int32_t q = in->gstart[*ngroups]; q < in->gstart[*ngroups + 1]; q++)
            (*ingroup)[in->gfp[q]] = 1;
    }
    return 0;
}

static void groups_free(group *gr, int32_t ngroups, uint8_t *ingroup)
{
    for (int32_t j = 0; j < ngroups; j++)
        group_free(&gr[j]);
    free(gr);
    free(ingroup);
}

/* A threshold programme over `pr` that expands at most `cap` states (its groups' own
 * expansions counted apart); 0, or -1 out of memory (`o` zeroed first; thresh_free
 * releases what was made either way). */
static int thresh_init(thresh *o, programme *pr, int64_t cap)
{
    memset(o, 0, sizeof(*o));
    o->pr = pr;
    o->cap = cap;
    size_t ck = ((size_t)pr->ps.nt + 1 + 7) / 8 * 8;
    o->ckbuf = calloc(ck, 1);
    if (!o->ckbuf || keyset_init(&o->keys, pr->stride) || keyset_init(&o->ck, ck))
        return -1;
    return 0;
}

static void thresh_free(thresh *o)
{
    keyset_free(&o->ck);
    free(o->chead);
    free(o->ccount);
    free(o->cnext);
    free(o->ckbuf);
    keyset_free(&o->keys);
    free(o->lb);
    free(o->ub);
    groups_free(o->gr, o->ngroups, o->ingroup);
    free(o->gfloor);
    free(o->gknown);
}

/* Threshold groups for `o`, over its programme's input with groups `gstart`/`gfp` (of
 * its footprints) and `cap` states each; 0, or -1 out of memory. */
static int thresh_groups(thresh *o, int32_t ngroups, const int32_t *gstart, const int32_t *gfp,
                         int64_t cap, int32_t nest)
{
    cf_bs_input *gin = &o->pr->pin;
    gin->ngroups = ngroups;
    gin->gstart = gstart;
    gin->gfp = gfp;
    gin->group_cap = cap;
    gin->nest = nest;
    if (groups_init(gin, &o->gr, &o->ngroups, &o->ingroup, 1))
        return -1;
    o->gfloor = calloc((size_t)o->ngroups + 1, sizeof(int64_t));
    o->gknown = calloc((size_t)o->ngroups + 1, sizeof(known));
    return o->gfloor && o->gknown ? 0 : -1;
}

/* Adds the expansions and bound evaluations of `o` and of its groups, theirs, and so on,
 * to *n and *v (a group asked by value counts its programme's expansions). */
static void thresh_work(const thresh *o, int64_t *n, int64_t *v)
{
    *n += o->nodes;
    *v += o->visits;
    for (int32_t j = 0; j < o->ngroups; j++) {
        if (o->gr[j].threshold)
            thresh_work(&o->gr[j].th, n, v);
        else
            *n += o->gr[j].nodes;
    }
}

/* Its work with its groups': their expansions, or if more, their bound evaluations over
 * VISITS_PER_NODE (an expansion evaluates 3-5 children on the bench records, but up to 12
 * on larger ones, and the evaluations are what takes the time). */
static int64_t thresh_nodes(const thresh *o)
{
    int64_t n = 0, v = 0;
    thresh_work(o, &n, &v);
    v /= VISITS_PER_NODE;
    return (v > n ? v : n) + (o->orc ? oracle_nodes(o->orc) : 0);
}

/* Memo entry `id` of a new state: lb `h`, no cost found yet, and listed under its pieces
 * and cursor for the dominance checks. 0, or -1 out of memory. */
static int thresh_add(thresh *o, int64_t id, int64_t kid, int64_t h)
{
    int64_t *l = grow(o->lb, &o->cap_lb, (size_t)id, sizeof(int64_t));
    if (!l)
        return -1;
    o->lb = l;
    int64_t *u = grow(o->ub, &o->cap_ub, (size_t)id, sizeof(int64_t));
    if (!u)
        return -1;
    o->ub = u;
    o->lb[id] = h;
    o->ub[id] = INT64_MAX;
    if (o->ccount[kid] < MEMO_PER_KEY) {
        int32_t *nx = grow(o->cnext, &o->cap_cnext, (size_t)id, sizeof(int32_t));
        if (!nx)
            return -1;
        o->cnext = nx;
        o->cnext[id] = o->chead[kid];
        o->chead[kid] = (int32_t)id;
        o->ccount[kid]++;
    }
    return 0;
}

/* What a state of `o` costs at least without a search: its memo's lower bound, or the
 * per-footprint bound with the next-granule penalty (`kn`: its known values, and what is
 * found of it). */
static int64_t thresh_floor(thresh *o, const uint8_t *st, known *kn)
{
    int64_t h = known_bound(o->pr, st, kn);
    int added;
    if (kn->id == -2)
        kn->id = keyset_find(&o->keys, st, 0, &added);
    if (kn->id >= 0 && o->lb[kn->id] > h)
        h = o->lb[kn->id];
    return h;
}

static int thresh_query(thresh *o, const uint8_t *st, int64_t b, int32_t depth, int64_t *lbout,
                        known *kn);

/* Whether o's groups prove that state `st` (`kn`: its known values) costs more than b: 1
 * with the bound in *lbout, 0 when they cannot, -1 when the memory ends. The footprints in
 * no group pay their terms and penalty ("rest"); each group is asked whether it can pay at
 * most what b leaves when the others pay their floors, and a no is a proof. */
static int thresh_groups_exceed(thresh *o, const uint8_t *st, known *kn, int64_t b,
                                int64_t *lbout)
{
    const search *s = &o->pr->ps;
    const cf_bs_input *in = s->in;
    int32_t nt = s->nt, cmod = st[nt];
    const uint8_t *ages = st + nt + 1;
    int64_t rest;
    if (s->memmask) {
        /* the per-footprint bound and open footprints less the live groups' (the footprints
         * in `ingroup`) */
        int32_t room = cmod ? s->g - cmod : 0;
        uint64_t openm = kn->open;
        rest = kn->h;
        for (int32_t j = 0; j < o->ngroups; j++) {
            if (o->gr[j].dead)
                continue;
            for (int32_t q = in->gstart[j]; q < in->gstart[j + 1]; q++) {
                int32_t i = in->gfp[q];
                openm &= ~((uint64_t)1 << i);
                if (kn->left[i])
                    rest -= bound_term(s, i, kn->left[i], ages[i], room);
            }
        }
        rest += penalty_masks(s, openm, cmod, st, ages);
    } else {
        rest = base_bound_except(s, kn->left, ages, cmod, o->pr->open, o->ingroup);
        rest += penalty(s, o->pr->open, cmod, st, ages, o->pr->share);
    }
    int64_t sum = 0;
    for (int32_t j = 0; j < o->ngroups; j++) {
        group *gj = &o->gr[j];
        o->gfloor[j] = 0;
        if (gj->dead)
            continue;
        int busy;
        uint8_t *proj = group_project(gj, in, j, st, cmod, ages, &busy);
        o->gknown[j] = programme_known(&gj->pr, proj, 0, group_left(gj, in, j, kn->left), busy);
        o->gfloor[j] = thresh_floor(&gj->th, proj, &o->gknown[j]);
        sum += o->gfloor[j];
    }
    if (rest + sum > b) {
        *lbout = rest + sum;
        return 1;
    }
    for (int32_t j = 0; j < o->ngroups; j++) {
        group *gj = &o->gr[j];
        if (gj->dead || gj->th.nodes > GROUP_RATIO * o->nodes + GROUP_SLACK)
            continue;                    /* ahead of the search it bounds: not asked now */
        int64_t others = sum - o->gfloor[j], lbj = 0;
        int r = thresh_query(&gj->th, gj->pr.proj, b - rest - others, 0, &lbj, &o->gknown[j]);
        if (r < 0) {
            if (thresh_nodes(&gj->th) < gj->th.cap)
                return -1;               /* out of memory */
            group_kill(gj, in, j, o->ingroup);
            return 0;                    /* this state: the plain bound */
        }
        if (r == 0) {
            *lbout = rest + others + lbj;
            return 1;
        }
    }
    return 0;
}

/* Whether the least future cost of projected state `st` is at most `b`: 1 yes, 0 no (a
 * proven lower bound above b in *lbout), -1 when the cap or the memory ends the search.
 * `kn`: its known values, or NULL to compute them; its id is its memo entry afterwards
 * (-1: none), or -2 when it was not looked up. */
static int thresh_query(thresh *o, const uint8_t *st, int64_t b, int32_t depth, int64_t *lbout,
                        known *kn)
{
    const search *s = &o->pr->ps;
    const cf_bs_input *in = s->in;
    int32_t nt = s->nt, nfp = s->nfp;
    const uint8_t *ages = st + nt + 1;
    int any = 0;
    if (kn) {
        any = kn->busy;
    } else {
        for (int32_t t = 0; t < nt; t++)
            any |= st[t] != 0;
    }
    *lbout = 0;
    if (!any)
        return b >= 0;
    if (b < 0)
        return 0;
    int added;
    int64_t id = kn && kn->id != -2 ? kn->id : keyset_find(&o->keys, st, 0, &added);
    if (kn)
        kn->id = id;
    if (id >= 0) {
        if (o->ub[id] <= b)
            return 1;
        if (o->lb[id] > b) {
            *lbout = o->lb[id];
            return 0;
        }
    }
    o->visits++;
    known own;
    if (!kn) {
        own = programme_known(o->pr, st, depth, NULL, 1);
        own.id = id;
        kn = &own;
    }
    int64_t h = known_bound(o->pr, st, kn);
    if (o->ngroups && h <= b) {
        int64_t gv = 0;
        int r = thresh_groups_exceed(o, st, kn, b, &gv);
        if (r < 0)
            return -1;
        if (r && gv > h)
            h = gv;
    }
    if (h <= b && o->orc) {
        /* the oracle's work counts as this search's: it may take only what is left */
        oracle_limit(o->orc, o->cap - thresh_nodes(o));
        int64_t olb = 0;
        int64_t lines = b / o->oscale;
        if (!oracle_within(o->orc, st, lines, &olb)) {
            if (olb <= lines)
                olb = lines + 1;
            if (olb * o->oscale > h)
                h = olb * o->oscale;
        }
    }
    if (h > b) {
        if (id >= 0 && h > o->lb[id])
            o->lb[id] = h;
        *lbout = h;
        return 0;
    }
    /* states with the same pieces and cursor: a footprint at a larger distance pays at
     * most that much more, and at a smaller one at most that much less */
    memcpy(o->ckbuf, st, (size_t)nt + 1);
    int cadded;
    int64_t kid = keyset_find(&o->ck, o->ckbuf, 1, &cadded);
    if (kid < 0)
        return -1;
    if (cadded) {
        int32_t *hd = grow(o->chead, &o->cap_chead, (size_t)kid, sizeof(int32_t));
        if (!hd)
            return -1;
        o->chead = hd;
        int32_t *c = grow(o->ccount, &o->cap_ccount, (size_t)kid, sizeof(int32_t));
        if (!c)
            return -1;
        o->ccount = c;
        o->chead[kid] = -1;
        o->ccount[kid] = 0;
    }
    for (int32_t x = o->chead[kid]; x >= 0; x = o->cnext[x]) {
        if (x == id || (o->lb[x] <= b && o->ub[x] > b))
            continue;                    /* it can answer neither way: up, down >= 0 */
        const uint8_t *a2 = o->keys.arena + (size_t)x * o->pr->stride + nt + 1;
        int64_t up = 0, down = 0;
        for (int32_t i = 0; i < nfp; i++) {
            if (a2[i] > ages[i])
                down += in->weight[i] * (a2[i] - ages[i]);
            else
                up += in->weight[i] * (ages[i] - a2[i]);
        }
        if (o->lb[x] - down > b) {
            if (id >= 0 && o->lb[x] - down > o->lb[id])
                o->lb[id] = o->lb[x] - down;
            *lbout = o->lb[x] - down;
            return 0;
        }
        if (o->ub[x] != INT64_MAX && o->ub[x] + up <= b) {
            if (id >= 0 && o->ub[x] + up < o->ub[id])
                o->ub[id] = o->ub[x] + up;
            return 1;
        }
    }
    if (thresh_nodes(o) >= o->cap) {
        o->stop = CF_BS_NODES;
        return -1;
    }
    if (o->max_keys && (int64_t)o->keys.n >= o->max_keys) {
        o->stop = CF_BS_STATES;
        return -1;
    }
    if (depth + 1 >= o->pr->maxdepth)
        return -1;
    if (id < 0) {
        id = keyset_find(&o->keys, st, 1, &added);
        if (id < 0 || thresh_add(o, id, kid, h))
            return -1;
        kn->id = id;
    }
    o->nodes++;
    /* the children, by increasing cost + per-footprint bound (the penalty and the groups
     * are the child's own first check) */
    children ch = programme_children(o->pr, st, kn->left, depth, 0);
    int64_t newlb = INT64_MAX;
    for (int32_t j = 0; j < ch.n; j++) {
        int32_t x = ch.order[j];
        if (ch.kest[x] > b) {
            if (ch.kest[x] < newlb)
                newlb = ch.kest[x];
            break;
        }
        const uint8_t *c = programme_child(o->pr, &ch, x, NULL);
        int64_t clb = 0;
        known ck = child_known(o->pr, &ch, x);
        int r = thresh_query(o, c, b - ch.kadd[x], depth + 1, &clb, &ck);
        if (r < 0)
            return -1;
        int64_t cid = ck.id;
        if (!ch.busy)
            cid = -1;
        else if (cid == -2)
            cid = keyset_find(&o->keys, c, 0, &added);
        if (r == 1) {
            int64_t cu = cid >= 0 ? o->ub[cid] : 0;
            if (ch.busy && (cid < 0 || cu == INT64_MAX))
                cu = b - ch.kadd[x];     /* a dominance answer for a state not kept */
            if (ch.kadd[x] + cu < o->ub[id])
                o->ub[id] = ch.kadd[x] + cu;
            return 1;
        }
        /* no: its least future cost exceeds b - ch.kadd[x] */
        int64_t cl = b - ch.kadd[x] + 1;
        if (clb > cl)
            cl = clb;
        if (cid >= 0 && o->lb[cid] > cl)
            cl = o->lb[cid];
        if (ch.kest[x] - ch.kadd[x] > cl)
            cl = ch.kest[x] - ch.kadd[x];
        if (ch.kadd[x] + cl < newlb)
            newlb = ch.kadd[x] + cl;
    }
    if (newlb > o->lb[id])
        o->lb[id] = newlb;
    *lbout = o->lb[id];
    return 0;
}

/* ---- the lines oracle (docs/layout.md, "The lines oracle"): whether a dirty search's state
 * can still reach the proven least lines. Its lines projection, with the whole-granule
 * pieces of each lines class (the same lines footprints) left merged into one block,
 * since some completion of the least lines places them contiguously (the blocks'
 * exchange argument, which holds from any state), is asked by a threshold programme
 * whether its least future lines are at most what the floor leaves. ---- */
typedef struct oracle {
    programme pr;
    thresh t;
    int32_t *psize, *palign, *pcounts, *pstart, *pidx, *tmap, *tclass;
    int32_t nclass;
    int32_t **cls;                    /* per class: its type per granules left, or -1 */
    int32_t *rem;                     /* per class: granules left (oracle_live's) */
    int64_t *pweight;
    int32_t *prep;                    /* per projected type: a type of the dirty search */
    int dead;
    int32_t nl;
    const cf_bs_input *in;
    int64_t base;                     /* its work before the current dirty search */
    const int32_t *plan_start, *plan_fp;  /* the groups it has (oracle_regroup) */
    int32_t plan_n, plan_nest;
} oracle;

static void oracle_free(oracle *o)
{
    thresh_free(&o->t);
    programme_free(&o->pr);
    free(o->psize);
    free(o->palign);
    free(o->pcounts);
    free(o->pstart);
    free(o->pidx);
    free(o->tmap);
    free(o->tclass);
    for (int32_t c = 0; c < o->nclass; c++)
        free(o->cls[c]);
    free(o->cls);
    free(o->pweight);
    free(o->rem);
    free(o->prep);
}

/* The projected type of the dirty search's type t when that type is one piece and the only
 * piece of its projected type (a loose type, or a lines class of that piece alone); -1
 * otherwise. */
static int32_t oracle_single(const oracle *o, const cf_bs_input *in, int32_t t)
{
    if (t < 0 || in->counts0[t] != 1)
        return -1;
    if (o->tmap[t] >= 0)
        return o->pcounts[o->tmap[t]] == 1 ? o->tmap[t] : -1;
    int32_t c = o->tclass[t], n = 0;
    for (int32_t u = 0; u < in->nt; u++)
        if (o->tclass[u] == c)
            n += in->counts0[u];
    return n == 1 ? o->cls[c][in->size[t] / in->g] : -1;
}

/* 0, or -1 when the projection cannot be built (no memory, too many types, lines weights
 * not multiples of the floor scale): then the oracle is not used. */
static int oracle_init(oracle *o, const cf_bs_input *in, const search *s)
{
    memset(o, 0, sizeof(*o));
    o->in = in;
    int32_t nt = in->nt, nfp = in->nfp, nl = in->nlines, g = in->g;
    if (nl <= 0 || nl > nfp || !in->floor_scale)
        return -1;
    o->nl = nl;
    o->tmap = malloc((size_t)nt * sizeof(int32_t));
    o->tclass = malloc((size_t)nt * sizeof(int32_t));
    o->cls = calloc((size_t)nt + 1, sizeof(int32_t *));
    o->rem = calloc((size_t)nt + 1, sizeof(int32_t));
    o->pweight = calloc((size_t)nl, sizeof(int64_t));
    if (!o->tmap || !o->tclass || !o->cls || !o->rem || !o->pweight)
        return -1;
    for (int32_t i = 0; i < nl; i++) {
        if (in->weight[i] % in->floor_scale)
            return -1;
        o->pweight[i] = in->weight[i] / in->floor_scale;
    }
    /* projected types: the loose ones (merged by size, alignment, lines footprints), then
     * per class one type per granule count its pieces can leave */
    int32_t cap_types = 256, pnt = 0;
    int32_t *rep = malloc((size_t)cap_types * sizeof(int32_t));  /* a dirty type per type */
    o->psize = calloc((size_t)cap_types, sizeof(int32_t));
    o->palign = calloc((size_t)cap_types, sizeof(int32_t));
    o->pcounts = calloc((size_t)cap_types, sizeof(int32_t));
    int32_t *crep = malloc((size_t)nt * sizeof(int32_t));       /* a dirty type per class */
    if (!rep || !o->psize || !o->palign || !o->pcounts || !crep) {
        free(rep);
        free(crep);
        return -1;
    }
    int rc = -1;
    for (int32_t t = 0; t < nt; t++) {
        const uint8_t *mt = s->member + (size_t)t * nfp;
        o->tmap[t] = o->tclass[t] = -1;
        if (in->align[t] == g && in->size[t] % g == 0) {
            int32_t c;
            for (c = 0; c < o->nclass; c++)
                if (!memcmp(s->member + (size_t)crep[c] * nfp, mt, nl))
                    break;
            if (c == o->nclass)
                crep[o->nclass++] = t;
            o->tclass[t] = c;
            continue;
        }
        int32_t p;
        for (p = 0; p < pnt; p++)
            if (o->psize[p] == in->size[t] && o->palign[p] == in->align[t] &&
                !memcmp(s->member + (size_t)rep[p] * nfp, mt, nl))
                break;
        if (p == pnt) {
            if (pnt >= 255)
                goto out;
            rep[pnt] = t;
            o->psize[pnt] = in->size[t];
            o->palign[pnt] = in->align[t];
            pnt++;
        }
        o->pcounts[p] += in->counts0[t];
        o->tmap[t] = p;
    }
    for (int32_t c = 0; c < o->nclass; c++) {
        int32_t total = 0;
        for (int32_t t = 0; t < nt; t++)
            if (o->tclass[t] == c)
                total += in->counts0[t] * (in->size[t] / g);
        uint8_t *can = calloc((size_t)total + 1, 1);
        o->cls[c] = malloc(((size_t)total + 1) * sizeof(int32_t));
        if (!can || !o->cls[c]) {
            free(can);
            goto out;
        }
        can[0] = 1;
        for (int32_t t = 0; t < nt; t++)
            if (o->tclass[t] == c)
                for (int32_t n = 0; n < in->counts0[t]; n++)
                    for (int32_t r = total; r >= in->size[t] / g; r--)
                        can[r] |= can[r - in->size[t] / g];
        o->cls[c][0] = -1;
        for (int32_t r = 1; r <= total; r++) {
            o->cls[c][r] = -1;
            if (!can[r])
                continue;
            if (pnt >= 255) {
                free(can);
                goto out;
            }
            rep[pnt] = crep[c];
            o->psize[pnt] = r * g;
            o->palign[pnt] = g;
            o->pcounts[pnt] = r == total;
            o->cls[c][r] = pnt++;
        }
        free(can);
    }
    o->pstart = calloc((size_t)pnt + 1, sizeof(int32_t));
    o->pidx = calloc((size_t)pnt * nl + 1, sizeof(int32_t));
    if (!o->pstart || !o->pidx)
        goto out;
    int32_t q = 0, pieces = 0;
    for (int32_t p = 0; p < pnt; p++) {
        o->pstart[p] = q;
        for (int32_t i = 0; i < nl; i++)
            if (s->member[(size_t)rep[p] * nfp + i])
                o->pidx[q++] = i;
        if (o->pcounts[p] > 255)
            goto out;
        pieces += o->pcounts[p];
    }
    o->pstart[pnt] = q;
    if (programme_init(&o->pr, in, pnt, nl, o->psize, o->palign, o->pcounts, o->pstart,
                       o->pidx, o->pweight, pieces, in->natural) ||
        thresh_init(&o->t, &o->pr, in->oracle_cap) ||
        thresh_groups(&o->t, in->ngroups, in->gstart, in->gfp, in->group_cap, in->nest))
        goto out;
    /* the dirty search's mirror pair (it keeps only completions with p before q), when
     * each piece is a projected type of its own: the oracle then asks the same of its
     * completions, so it drops only states the dirty search would find no layout under */
    int32_t op = oracle_single(o, in, in->mp), oq = oracle_single(o, in, in->mq);
    if (op >= 0 && oq >= 0 && op != oq) {
        o->pr.pin.mp = op;
        o->pr.pin.mq = oq;
    }
    o->plan_start = in->gstart;
    o->plan_fp = in->gfp;
    o->plan_n = in->ngroups;
    o->plan_nest = in->nest;
    o->prep = rep;
    rep = NULL;
    rc = 0;
out:
    free(rep);
    free(crep);
    return rc;
}

/* Gives the oracle the groups of `in` unless it has them, keeping its memo: a lower bound
 * or a cost found there is proven whatever groups bounded the search that found it. 0, or
 * -1 when the memory ends. */
static int oracle_regroup(oracle *o, const cf_bs_input *in)
{
    if (o->plan_start == in->gstart && o->plan_fp == in->gfp && o->plan_n == in->ngroups &&
        o->plan_nest == in->nest)
        return 0;
    groups_free(o->t.gr, o->t.ngroups, o->t.ingroup);
    free(o->t.gfloor);
    o->t.gr = NULL;
    o->t.ngroups = 0;
    o->t.ingroup = NULL;
    o->t.gfloor = NULL;
    o->plan_start = in->gstart;
    o->plan_fp = in->gfp;
    o->plan_n = in->ngroups;
    o->plan_nest = in->nest;
    return thresh_groups(&o->t, in->ngroups, in->gstart, in->gfp, in->group_cap, in->nest);
}

/* The oracle's projection of the dirty search's state c, in its programme's buffer. */
static uint8_t *oracle_project(oracle *o, const uint8_t *c)
{
    const cf_bs_input *in = o->in;
    int32_t pnt = o->pr.ps.nt, nl = o->nl;
    uint8_t *buf = o->pr.proj;
    memset(buf, 0, o->pr.stride);
    for (int32_t k = 0; k < o->nclass; k++)
        o->rem[k] = 0;
    for (int32_t t = 0; t < in->nt; t++) {
        if (!c[t])
            continue;
        if (o->tmap[t] >= 0)
            buf[o->tmap[t]] += c[t];
        else
            o->rem[o->tclass[t]] += c[t] * (in->size[t] / in->g);
    }
    for (int32_t k = 0; k < o->nclass; k++)
        if (o->rem[k])
            buf[o->cls[k][o->rem[k]]] = 1;
    buf[pnt] = c[in->nt];
    memcpy(buf + pnt + 1, c + in->nt + 1, (size_t)nl);
    return buf;
}

/* Whether the future lines of the dirty search's state c can be at most `lines`: 1 yes (or
 * the oracle cannot tell), 0 no, with a proven lower bound on them in *lb. */
static int oracle_within(oracle *o, const uint8_t *c, int64_t lines, int64_t *lb)
{
    *lb = 0;
    if (o->dead)
        return 1;
    int r = thresh_query(&o->t, oracle_project(o, c), lines, 0, lb, NULL);
    if (r < 0) {
        o->dead = 1;
        return 1;
    }
    return r;
}

static int64_t oracle_nodes(const oracle *o)
{
    return thresh_nodes(&o->t) - o->base;
}

/* At most `room` more nodes for the oracle (never more than its own cap). */
static void oracle_limit(oracle *o, int64_t room)
{
    int64_t cap = thresh_nodes(&o->t) + (room > 0 ? room : 0);
    if (cap < o->t.cap)
        o->t.cap = cap;
}

/* Whether the dirty search's state c, at cost cg, may still reach the least lines: 1
 * yes (or the oracle cannot tell), 0 no. */
static int oracle_live(oracle *o, const uint8_t *c, int64_t cg)
{
    int64_t lb;
    return oracle_within(o, c, o->in->floor_lines - cg / o->in->floor_scale, &lb);
}

int cf_block_best_first(const cf_bs_input *in, cf_bs_output *out)
{
    search s;
    memset(&s, 0, sizeof(s));
    int32_t nt = in->nt, nfp = in->nfp, g = in->g, k = in->k;
    size_t stride = ((size_t)nt + 1 + nfp + 7) / 8 * 8;  /* zero-padded to words */
    size_t ckey_stride = ((size_t)nt + 1 + 7) / 8 * 8;
    keyset states = {0};
    heap q = {0};
    ivec parents = {0}, moves = {0};
    memo closed = {0};
    int64_t *bestg = NULL;
    size_t cap_g = 0;
    int32_t max_g1 = 1;
    for (int32_t t = 0; t < nt; t++)
        if (in->size[t] / g + 1 > max_g1)
            max_g1 = in->size[t] / g + 1;
    /* per-expansion caches: slot 0..max_g1 for granule advances, max_g1 + ncmod for stays */
    int32_t nslot = max_g1 + 1 + g;
    int64_t *slot_total = calloc(nslot, sizeof(int64_t));
    int64_t *slot_terms = calloc((size_t)nslot * (nfp ? nfp : 1), sizeof(int64_t));
    uint8_t *slot_ages = calloc((size_t)nslot * (nfp ? nfp : 1), 1);
    int64_t *slot_epoch = calloc(nslot, sizeof(int64_t));
    int64_t *left = calloc(nfp ? nfp : 1, sizeof(int64_t));
    int64_t *wa0 = calloc(nfp ? nfp : 1, sizeof(int64_t));
    int64_t *wa1 = calloc(nfp ? nfp : 1, sizeof(int64_t));
    int64_t *wc = calloc(nfp ? nfp : 1, sizeof(int64_t));
    int64_t *stay_terms = calloc(nfp ? nfp : 1, sizeof(int64_t));
    uint8_t *open = calloc(nfp ? nfp : 1, 1);
    uint8_t *share = calloc(nfp ? nfp : 1, 1);
    uint8_t *child = calloc(stride, 1);
    uint8_t *counts = calloc(stride, 1), *ages = counts + nt + 1;
    uint8_t *ckey = calloc(ckey_stride, 1);   /* (counts, cursor), zero-padded */
    int64_t stay_total = 0;
    int status = CF_BS_NOMEM;
    int64_t front = 0, expanded = 0;
    int32_t ngroups = 0;
    group *gr = NULL;
    uint8_t *ingroup = NULL;
    oracle orc_store, *orc = NULL;
    uint32_t seq = 0;
    int added;

    out->path_len = 0;
    out->cost = -1;
    if (!slot_total || !slot_terms || !slot_ages || !slot_epoch || !left || !wa0 || !wa1 ||
        !wc || !stay_terms || !open || !share || !child || !counts || !ckey ||
        search_init(&s, in) ||
        keyset_init(&states, stride) || keyset_init(&closed.keys, ckey_stride))
        goto done;

    if (in->oracle) {
        if (oracle_init(&orc_store, in, &s))
            oracle_free(&orc_store);      /* it cannot be built: the search bounds itself */
        else
            orc = &orc_store;
    }
    /* the groups bound the oracle when there is one, else this search */
    if (!orc && groups_init(in, &gr, &ngroups, &ingroup, 0))
        goto done;

    /* the root */
    for (int32_t t = 0; t < nt; t++)
        child[t] = (uint8_t)in->counts0[t];
    child[nt] = (uint8_t)in->cmod0;
    memcpy(child + nt + 1, in->ages0, nfp);
    {
        bytes_left(in, child, left);
        int64_t f0 = in->g0 + base_bound(&s, left, in->ages0, in->cmod0, open);
        f0 = lift(&s, f0, f0);
        int64_t id = keyset_find(&states, child, 1, &added);
        if (id < 0)
            goto done;
        cap_g = 1024;
        bestg = malloc(cap_g * sizeof(int64_t));
        if (!bestg)
            goto done;
        bestg[id] = in->g0;
        entry e = {f0, in->g0, INT64_MIN, 0, (uint32_t)id, -2, -1, -1};
        if (heap_push(&q, e))
            goto done;
    }

    status = CF_BS_NONE;
    while (q.n) {
        entry e = heap_pop(&q);
        front = e.f;
        if (bestg[e.id] < e.g)
            continue;                 /* a cheaper copy was queued since */
        const uint8_t *st = states.arena + (size_t)e.id * stride;
        memcpy(counts, st, nt);
        int32_t cmod = st[nt];
        memcpy(ages, st + nt + 1, nfp);
        int full_flag = e.ref & 1;
        int again = e.me >= 0;        /* partial expansion: its next children */
        int busy = 0;
        for (int32_t t = 0; t < nt; t++)
            busy |= counts[t] != 0;
        if (busy && !again) {
            memcpy(ckey, st, (size_t)nt + 1);
            int64_t kid = keyset_find(&closed.keys, ckey, 1, &added);
            if (kid < 0) {
                status = CF_BS_NOMEM;
                goto done;
            }
            if (added) {
                if (memo_add(&closed, kid, ages, nfp, e.g)) {
                    status = CF_BS_NOMEM;
                    goto done;
                }
            } else if (!full_flag) {
                if (dominated(&closed, kid, ages, nfp, e.g, in->weight))
                    continue;
                if (closed.count[kid] < MEMO_PER_KEY && memo_add(&closed, kid, ages, nfp, e.g)) {
                    status = CF_BS_NOMEM;
                    goto done;
                }
            }
        }
        bytes_left(in, counts, left);
        if (!full_flag && busy && !again) {
            int64_t b = base_bound(&s, left, ages, cmod, open), b0 = b;
            b += penalty(&s, open, cmod, counts, ages, share);
            if (ngroups) {
                int64_t gv = groups_value(gr, ngroups, in, counts, cmod, ages, left, ingroup);
                if (gv >= 0) {
                    /* the groups, plus the other footprints' terms and penalty */
                    gv += base_bound_except(&s, left, ages, cmod, open, ingroup);
                    gv += penalty(&s, open, cmod, counts, ages, share);
                    if (gv > b)
                        b = gv;
                }
            }
            int64_t full = lift(&s, e.g + b, e.g + b0);
            if (full > e.f) {
                if (full < in->limit) {
                    entry r = e;
                    r.f = full;
                    r.ref |= 1;
                    if (heap_push(&q, r)) {
                        status = CF_BS_NOMEM;
                        goto done;
                    }
                }
                continue;
            }
        }
        /* an expansion: one node of the budget */
        int64_t gnodes = 0;
        for (int32_t j = 0; j < ngroups; j++)
            gnodes += gr[j].nodes;
        if (orc)
            gnodes += thresh_nodes(&orc->t);
        if (expanded + gnodes >= in->max_nodes) {
            status = CF_BS_NODES;
            goto done;
        }
        int32_t me = e.me;
        if (!again) {
            me = (int32_t)parents.n;
            if (ivec_push(&parents, e.ref >> 1) || ivec_push(&moves, e.move)) {
                status = CF_BS_NOMEM;
                goto done;
            }
        }
        expanded++;
        int64_t next = INT64_MAX;     /* partial expansion: the smallest value left out */
        if (!busy) {
            status = CF_BS_FOUND;
            out->cost = e.g;
            front = e.g;
            int32_t n = 0;
            for (int32_t node = me; node >= 0 && moves.a[node] >= 0; node = parents.a[node])
                n++;
            out->path_len = n;
            for (int32_t node = me; node >= 0 && moves.a[node] >= 0; node = parents.a[node])
                out->path[--n] = moves.a[node];
            goto done;
        }
        /* footprints with bytes left: bound terms */
        for (int32_t i = 0; i < nfp; i++) {
            int64_t w = in->weight[i];
            wa0[i] = w * ages[i];
            wa1[i] = w * (ages[i] < k ? ages[i] + 1 : k);
            wc[i] = left[i] ? w * (((left[i] + g - 1) >> s.gshift) - 1) : 0;
        }
        int stay_ready = 0;
        int64_t epoch = expanded;
        for (int32_t t = 0; t < nt; t++) {
            if (!counts[t] || (t == in->mq && counts[in->mp]))
                continue;             /* q only after p (the mirrored layouts have p after q) */
            int32_t size = in->size[t];
            const move *mv = &s.moves[((size_t)t * g + cmod) * 2];
            int32_t nm = s.nmoves[(size_t)t * g + cmod];
            for (int32_t j = 0; j < nm; j++) {
                const move *m = &mv[j];
                int32_t slot = m->g1 ? m->g1 : max_g1 + m->ncmod;
                int64_t *terms = slot_terms + (size_t)slot * nfp;
                uint8_t *bages = slot_ages + (size_t)slot * nfp;
                if (slot_epoch[slot] != epoch) {
                    slot_epoch[slot] = epoch;
                    int64_t total = 0;
                    if (m->g1) {
                        for (int32_t i = 0; i < nfp; i++) {
                            if (!left[i]) {
                                terms[i] = 0;
                                bages[i] = 0;
                                continue;
                            }
                            int32_t a = ages[i] + m->g1;
                            if (a > k)
                                a = k;
                            bages[i] = (uint8_t)a;
                            terms[i] = in->weight[i] * a + wc[i];
                            total += terms[i];
                        }
                    } else {
                        if (!stay_ready) {
                            stay_ready = 1;
                            stay_total = 0;
                            for (int32_t i = 0; i < nfp; i++) {
                                stay_terms[i] = 0;
                                if (left[i] && ages[i]) {
                                    stay_terms[i] = in->weight[i] * ages[i] + wc[i];
                                    stay_total += stay_terms[i];
                                }
                            }
                        }
                        total = stay_total;
                        int32_t room = g - m->ncmod;
                        for (int32_t i = 0; i < nfp; i++) {
                            terms[i] = stay_terms[i];
                            bages[i] = ages[i];
                            if (left[i] && !ages[i] && left[i] > room) {
                                terms[i] = in->weight[i] * ((left[i] - room + g - 1) >> s.gshift);
                                total += terms[i];
                            }
                        }
                    }
                    slot_total[slot] = total;
                }
                int64_t bound = slot_total[slot];
                const int64_t *was = m->sg ? wa1 : wa0;
                int64_t add = m->extra;
                for (int32_t j2 = in->fidx_start[t]; j2 < in->fidx_start[t + 1]; j2++) {
                    int32_t i = in->fidx[j2];
                    add += was[i];
                    bound += in->weight[i] * ((left[i] - m->c) >> s.gshift) - terms[i];
                }
                int64_t ng = e.g + add;
                int64_t nf = lift(&s, ng + bound, ng + bound);
                if (nf >= in->limit)
                    continue;
                if (in->partial) {
                    if (nf <= e.done)
                        continue;     /* queued at an earlier expansion */
                    if (nf > e.f) {
                        if (nf < next)
                            next = nf;
                        continue;     /* at a later one */
                    }
                }
                if (nf < e.f)
                    nf = e.f;
                memcpy(child, counts, nt);
                child[t]--;
                child[nt] = (uint8_t)m->ncmod;
                memcpy(child + nt + 1, bages, nfp);
                for (int32_t j2 = in->fidx_start[t]; j2 < in->fidx_start[t + 1]; j2++) {
                    int32_t i = in->fidx[j2];
                    child[nt + 1 + i] = (uint8_t)(left[i] != size ? m->v : 0);
                }
                if (orc && !oracle_live(orc, child, ng))
                    continue;         /* no layout of the least lines goes through it */
                int64_t id = keyset_find(&states, child, 1, &added);
                if (id < 0) {
                    status = CF_BS_NOMEM;
                    goto done;
                }
                if (!added && bestg[id] <= ng)
                    continue;
                if (added) {
                    if ((int64_t)states.n > in->max_states) {
                        status = CF_BS_STATES;
                        goto done;
                    }
                    int64_t *b2 = grow(bestg, &cap_g, (size_t)id, sizeof(int64_t));
                    if (!b2) {
                        status = CF_BS_NOMEM;
                        goto done;
                    }
                    bestg = b2;
                }
                bestg[id] = ng;
                seq++;
                entry c = {nf, ng, INT64_MIN, seq, (uint32_t)id, me * 2, t * 256 + m->o, -1};
                if (heap_push(&q, c)) {
                    status = CF_BS_NOMEM;
                    goto done;
                }
            }
        }
        if (next != INT64_MAX) {
            /* the children left out wait behind the state itself, at the smallest value */
            entry r = e;
            r.f = next;
            r.done = e.f;
            r.me = me;
            if (heap_push(&q, r)) {
                status = CF_BS_NOMEM;
                goto done;
            }
        }
    }
    front = in->limit;                /* the queue is empty: nothing below the limit */

done:
    out->queued = (int64_t)states.n;
    out->status = status;
    out->bound = front;
    {
        int64_t gnodes = 0;
        for (int32_t j = 0; j < ngroups; j++)
            gnodes += gr[j].nodes;
        if (orc)
            gnodes += thresh_nodes(&orc->t);
        out->expanded = expanded + gnodes;
    }
    keyset_free(&states);
    keyset_free(&closed.keys);
    free(closed.head);
    free(closed.count);
    free(closed.e);
    free(closed.ages);
    free(q.a);
    free(parents.a);
    free(moves.a);
    free(bestg);
    search_free(&s);
    free(slot_total);
    free(slot_terms);
    free(slot_ages);
    free(slot_epoch);
    free(left);
    free(wa0);
    free(wa1);
    free(wc);
    free(stay_terms);
    free(open);
    free(share);
    free(child);
    free(counts);
    free(ckey);
    groups_free(gr, ngroups, ingroup);
    if (orc)
        oracle_free(orc);
    return status;
}

/* ---- the threshold lines search (docs/layout.md, "Threshold lines search"): the least
 * cost below in->limit by threshold questions on the root. "Is the least cost at most
 * hi?" (hi = limit - 1 first): yes gives a layout, followed down from the root through
 * children that answer yes, and the next question asks for less than its cost; no proves
 * that nothing costs at most hi, so the last layout found is optimal (or nothing is below
 * the limit). Every question reuses the proven bounds of the ones before. Cut by the
 * budget or the states cap, it returns the last layout found (not proven)
 * and the root's proven lower bound. A dirty search (in->oracle, floor given) is bounded
 * by the lines oracle, and its groups bound the oracle ("The threshold dirty search").
 * thresh_search is that loop for any threshold programme t over pr, from `root` at cost
 * g0 (the moves of the last layout to out->path; `path`: room for every piece); it
 * returns the status and sets out->cost (-1: no layout) and out->bound. known_lo > 0
 * (cf_bs_input.lo): a layout at most that ends the search; with bisect, asked first. */
static int thresh_search(thresh *t, programme *pr, const uint8_t *root, int64_t g0,
                         int64_t limit, int bisect, int64_t known_lo, cf_bs_output *out,
                         int32_t *path)
{
    int32_t nt = pr->ps.nt;
    int64_t best = -1, hi = limit - 1;
    int cut = 0, status = CF_BS_NOMEM;
    out->bound = g0;
    /* bisect (a lines search): while the gap between the proven bound lo and hi is above
     * 1/BISECT_GAP of hi and at most 1/BISECT_FAR of it, ask halfway; a no raises lo (a
     * proof), a yes gives a layout */
    int64_t lo = 0;
    if (bisect) {
        known kn = programme_known(pr, root, 0, NULL, -1);
        lo = g0 + thresh_floor(t, root, &kn);
    }
    for (;;) {
        int64_t lb = 0;
        int64_t ask = bisect && (hi - lo) * BISECT_GAP > hi && (hi - lo) * BISECT_FAR <= hi
                          ? lo + (hi - lo) / 2 : hi;
        if (bisect && known_lo > lo && known_lo < ask)
            ask = known_lo;           /* the caller's bound first: a yes there is optimal */
        int r = ask < g0 ? 0 : thresh_query(t, root, ask - g0, 0, &lb, NULL);
        if (r < 0) {
            status = t->stop ? t->stop : CF_BS_NOMEM;
            cut = 1;
            break;
        }
        if (r == 0 && ask < hi) {         /* nothing at most ask: a proven bound */
            lo = g0 + lb > ask + 1 ? g0 + lb : ask + 1;
            continue;
        }
        if (r == 0) {
            if (best >= 0) {
                status = CF_BS_FOUND;
                out->bound = best;
            } else {
                status = CF_BS_NONE;
                out->bound = g0 + lb > limit ? g0 + lb : limit;
            }
            break;
        }
        /* yes: follow children that answer yes down to a complete layout */
        const uint8_t *st = root;
        int64_t rb = ask - g0, cost = g0;
        int32_t n = 0, d = 0, ok = 1;
        for (;;) {
            int any = 0;
            for (int32_t i = 0; i < nt; i++)
                any |= st[i] != 0;
            if (!any)
                break;
            children ch = programme_children(pr, st, programme_left(pr, st, d), d, 0);
            int found = 0;
            for (int32_t j = 0; j < ch.n && !found; j++) {
                int32_t x = ch.order[j];
                if (ch.kest[x] > rb)
                    break;
                const uint8_t *c = programme_child(pr, &ch, x, NULL);
                int64_t clb;
                known ck = child_known(pr, &ch, x);
                int rr = thresh_query(t, c, rb - ch.kadd[x], d + 1, &clb, &ck);
                if (rr < 0) {
                    ok = -1;
                    break;
                }
                if (rr == 1) {
                    path[n++] = ch.kmove[x];
                    rb -= ch.kadd[x];
                    cost += ch.kadd[x];
                    st = c;
                    found = 1;
                }
            }
            if (ok < 0 || !found) {
                ok = ok < 0 ? -1 : 0;     /* !found: cannot happen, a yes has a yes child */
                break;
            }
            d++;
        }
        if (ok <= 0) {
            status = ok < 0 && t->stop ? t->stop : CF_BS_NOMEM;
            cut = 1;
            break;
        }
        best = cost;
        memcpy(out->path, path, (size_t)n * sizeof(int32_t));
        out->path_len = n;
        hi = cost - 1;
        if (known_lo > 0 && cost <= known_lo) {
            status = CF_BS_FOUND;
            out->bound = cost;
            break;
        }
    }
    if (cut) {                        /* the root's proven bound, at most the last layout */
        known kn = programme_known(pr, root, 0, NULL, -1);
        int64_t floor = g0 + thresh_floor(t, root, &kn);
        if (lo > floor)
            floor = lo;
        out->bound = best >= 0 && floor > best ? best : floor;
    }
    out->cost = best;
    return status;
}

int cf_block_threshold(const cf_bs_input *in, cf_bs_output *out)
{
    programme pr;
    thresh t;
    memset(&pr, 0, sizeof(pr));
    memset(&t, 0, sizeof(t));
    int32_t nt = in->nt, nfp = in->nfp, pieces = 0;
    for (int32_t i = 0; i < nt; i++)
        pieces += in->counts0[i];
    int status = CF_BS_NOMEM;
    out->path_len = 0;
    out->cost = -1;
    out->bound = in->g0;
    out->expanded = out->queued = 0;
    int32_t *path = malloc(((size_t)pieces + 1) * sizeof(int32_t));
    uint8_t *root = NULL;
    oracle orc_store;
    memset(&orc_store, 0, sizeof(orc_store));
    if (!path ||
        programme_init(&pr, in, nt, nfp, in->size, in->align, in->counts0, in->fidx_start,
                       in->fidx, in->weight, pieces, in->natural) ||
        thresh_init(&t, &pr, in->max_nodes))
        goto done;
    pr.pin.mp = in->mp;               /* q only after p, as in the best-first search */
    pr.pin.mq = in->mq;
    if (in->oracle && in->floor_scale && in->orc) {
        /* the oracle of cf_oracle_open, whose memo the lines search filled */
        oracle *o = in->orc;
        o->in = in;
        if (oracle_regroup(o, in))
            goto done;
        o->base = thresh_nodes(&o->t);
        o->t.cap = o->base + in->oracle_cap;
        o->t.max_keys = 0;
        o->t.stop = 0;
        o->dead = 0;
        t.orc = o;
        t.oscale = in->floor_scale;
    } else if (in->oracle && in->floor_scale) {
        /* a dirty search: the lines oracle bounds it, and the groups bound the oracle */
        if (!oracle_init(&orc_store, in, &pr.ps)) {
            t.orc = &orc_store;
            t.oscale = in->floor_scale;
        }
    } else if (thresh_groups(&t, in->ngroups, in->gstart, in->gfp,
                             in->group_cap > 0 ? in->group_cap : in->max_nodes, in->nest))
        goto done;
    t.max_keys = in->max_states;
    root = calloc(pr.stride, 1);
    if (!root)
        goto done;
    for (int32_t i = 0; i < nt; i++)
        root[i] = (uint8_t)in->counts0[i];
    root[nt] = (uint8_t)in->cmod0;
    memcpy(root + nt + 1, in->ages0, (size_t)nfp);
    status = thresh_search(&t, &pr, root, in->g0, in->limit, !in->floor_scale, in->lo, out,
                           path);
done:
    out->expanded = thresh_nodes(&t);
    out->queued = (int64_t)t.keys.n;
    thresh_free(&t);
    oracle_free(&orc_store);
    programme_free(&pr);
    free(root);
    free(path);
    return status;
}

/* ---- the lines oracle kept from the lines search to the dirty search (docs/layout.md,
 * "One oracle for both phases"): cf_oracle_open builds the oracle of a dirty search's
 * input (floor_scale set; floor_lines, limit and budgets unused), cf_oracle_lines runs the
 * threshold lines search over its projection, and cf_block_threshold with in->orc set
 * goes on with the same memo. The input's arrays must outlive the handle. ---- */
void *cf_oracle_open(const cf_bs_input *in)
{
    oracle *o = calloc(1, sizeof(oracle));
    search s;
    memset(&s, 0, sizeof(s));
    if (!o || !in->floor_scale || search_init(&s, in) || oracle_init(o, in, &s)) {
        search_free(&s);
        if (o)
            oracle_free(o);
        free(o);
        return NULL;
    }
    search_free(&s);
    return o;
}

void cf_oracle_close(void *h)
{
    if (h) {
        oracle_free(h);
        free(h);
    }
}

/* The oracle's projected types: their number, and up to `cap` of their sizes, alignments,
 * counts at the root (a class's types for fewer granules than it has start at 0) and
 * (`rep`) a type of the dirty search each stands for. */
int32_t cf_oracle_types(void *h, int32_t *size, int32_t *align, int32_t *count, int32_t *rep,
                        int32_t cap)
{
    oracle *o = h;
    int32_t n = o->pr.ps.nt;
    for (int32_t p = 0; p < n && p < cap; p++) {
        size[p] = o->psize[p];
        align[p] = o->palign[p];
        count[p] = o->pcounts[p];
        rep[p] = o->prep[p];
    }
    return n;
}

/* The threshold lines search over the oracle's projection of in's root: the least lines
 * below in->limit (in lines, the fixed area's lines in in->g0 / in->floor_scale), with
 * at most in->max_nodes of work, bounded by in's groups (the oracle takes them, keeping
 * its memo). Moves in out->path are projected types * 256 + start; the rest of out is
 * cf_block_threshold's. */
int cf_oracle_lines(void *h, const cf_bs_input *in, cf_bs_output *out)
{
    oracle *o = h;
    int32_t nt = in->nt, pieces = 0;
    out->path_len = 0;
    out->cost = -1;
    out->bound = 0;
    out->expanded = out->queued = 0;
    o->in = in;
    if (oracle_regroup(o, in))
        return CF_BS_NOMEM;
    for (int32_t p = 0; p < o->pr.ps.nt; p++)
        pieces += o->pcounts[p];
    int64_t start = thresh_nodes(&o->t);
    o->t.cap = start + in->max_nodes;
    o->t.max_keys = in->max_states;
    o->t.stop = 0;
    int status = CF_BS_NOMEM;
    uint8_t *droot = calloc((size_t)nt + 1 + in->nfp, 1);
    uint8_t *root = malloc(o->pr.stride);
    int32_t *path = malloc(((size_t)pieces + 1) * sizeof(int32_t));
    if (droot && root && path) {
        for (int32_t i = 0; i < nt; i++)
            droot[i] = (uint8_t)in->counts0[i];
        droot[nt] = (uint8_t)in->cmod0;
        memcpy(droot + nt + 1, in->ages0, (size_t)in->nfp);
        memcpy(root, oracle_project(o, droot), o->pr.stride);
        status = thresh_search(&o->t, &o->pr, root, in->g0 / in->floor_scale, in->limit, 1,
                               in->lo, out, path);
    }
    out->expanded = thresh_nodes(&o->t) - start;
    out->queued = (int64_t)o->t.keys.n;
    free(droot);
    free(root);
    free(path);
    return status;
}
