/* cf_share.c - which threads touch which objects (issue 30; docs/raw-trace-format.md).
 *
 * Threads are numbered 0, 1, ... in the order they begin their first invocation
 * (cf_share_thread).  Tracking starts when a second thread begins one: the tables below are
 * mapped then, once, and cf_share_on is set.  From then on the end of every outermost
 * invocation (cf_core.c, cf_flush) calls cf_share_end, which takes, for every object the
 * invocation touched, the granules it read and wrote (from its literal quads and its folded
 * summary) and, under one ticket lock, updates the object's entry and counts handoffs.  A
 * single-threaded process never maps, locks or writes anything here; the per-access path
 * knows nothing of it.  cf_share_dump writes the `threads`, `share`, `shobj` and `handoff`
 * lines of the raw trace.
 *
 * Granule of a type: the smallest power of two g with size <= 256 * g, for the element size
 * of the first object of the type this tracking saw (bytes beyond 256 granules of a larger
 * object are not tracked), so an object's granules fit in a 256-bit mask.
 *
 * Per object (key: base address and type; an object freed and another allocated at its
 * address are one object): per thread slot (thread numbers 0..14, 15 for 15 and above) the
 * granules read and written; the last writer `lw`, the granules `W` it wrote since another
 * thread last touched the object, and the slots `seen` already charged for them.  At the end
 * of an invocation of thread b with granules R read and Wb written (T = R | Wb):
 *   1. lw set, lw != b, slot(b) not in seen, W not empty: one handoff (W, T) of the type
 *      (a table of distinct (type, W, T) with counts); slot(b) joins seen;
 *   2. Wb not empty: W |= Wb if lw == b, else W = Wb and lw = b; seen = {slot(b)}.
 * Interleavings inside one invocation are not seen; concurrent invocations are ordered by
 * the time they end.
 *
 * Fixed capacities (a full table counts the object, record or handoff pattern it could not
 * keep in the type's `lost`, once per invocation that needed it): CF_SH_OBJS objects,
 * CF_SH_RECS (object, thread slot) records, CF_SH_HANDS distinct handoff patterns.
 */
#define _GNU_SOURCE
#include "cf_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum {
    CF_SH_SLOTS = 16,       /* thread slots per object */
    CF_SH_OBJTAB = 1 << 16, /* object table (open addressing) */
    CF_SH_OBJS = CF_SH_OBJTAB / 4 * 3,
    CF_SH_RECS = 1 << 17,
    CF_SH_HANDTAB = 1 << 13, /* handoff table (open addressing) */
    CF_SH_HANDS = CF_SH_HANDTAB / 4 * 3,
    CF_SH_ROLES = 1 << 16,  /* roles of one invocation: 2 * max_objects <= 65534 */
    CF_SH_GRANULES = 256,
};

typedef struct cf_gmask {
    uint64_t w[CF_SH_GRANULES / 64];
} cf_gmask;

/* The granules one thread slot read and wrote of one object. */
typedef struct cf_shrec {
    cf_gmask r, w;
    uint32_t next; /* index + 1 of the object's next record, 0: none */
    uint32_t slot;
} cf_shrec;

typedef struct cf_shobj {
    uintptr_t base; /* 0: empty */
    uint32_t type;
    uint32_t lw;    /* 1 + the last writer's thread number, 0: none */
    uint32_t recs;  /* index + 1 of the first record, 0: none */
    uint16_t seen;  /* slots already charged for W */
    uint16_t slots; /* slots with a record */
    cf_gmask W;
} cf_shobj;

typedef struct cf_shhand {
    uint64_t count; /* 0: empty */
    uint32_t type;
    cf_gmask w, t;
} cf_shhand;

/* One role's granules in an ending invocation. */
typedef struct cf_shacc {
    cf_gmask r, w;
} cf_shacc;

uint32_t cf_share_on;
static uint32_t cf_sh_nthreads;
/* The one lock of the tables: a ticket lock, so that threads ending invocations at the same
 * time take turns in the order they came (a mutex lets the thread that releases it take it
 * again before a woken waiter runs: under tracing, where this section is a large part of a
 * short invocation, the threads' invocations would then end in long runs of one thread,
 * and the handoffs of threads that really ran at the same time would not be seen).  A
 * waiter spins briefly, then yields its core. */
static uint32_t cf_sh_ticket, cf_sh_serving;

static void cf_sh_lock(void)
{
    uint32_t me = __atomic_fetch_add(&cf_sh_ticket, 1, __ATOMIC_RELAXED);
    unsigned spins = 0;
    while (__atomic_load_n(&cf_sh_serving, __ATOMIC_ACQUIRE) != me) {
        if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            spins = 0;
            sched_yield();
        }
    }
}

static void cf_sh_unlock(void)
{
    __atomic_store_n(&cf_sh_serving, __atomic_load_n(&cf_sh_serving, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELEASE);
}
static cf_shobj *cf_sh_objs;
static uint32_t cf_sh_nobjs;
static cf_shrec *cf_sh_recs;
static uint32_t cf_sh_nrecs;
static cf_shhand *cf_sh_hands;
static uint32_t cf_sh_nhands;
static cf_shacc *cf_sh_acc; /* [CF_SH_ROLES] */
static uint8_t cf_sh_gshift[CF_MAX_TYPES];
static uint8_t cf_sh_gknown[CF_MAX_TYPES];
static uint64_t cf_sh_threads[CF_MAX_TYPES];
static uint64_t cf_sh_lost[CF_MAX_TYPES];

static void *cf_sh_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Map the tables (once) and turn tracking on; under the lock (cf_sh_lock). */
static void cf_share_start_locked(void)
{
    if (cf_share_on)
        return;
    cf_sh_objs = cf_sh_map(CF_SH_OBJTAB * sizeof(cf_shobj));
    cf_sh_recs = cf_sh_map(CF_SH_RECS * sizeof(cf_shrec));
    cf_sh_hands = cf_sh_map(CF_SH_HANDTAB * sizeof(cf_shhand));
    cf_sh_acc = cf_sh_map(CF_SH_ROLES * sizeof(cf_shacc));
    if (!cf_sh_objs || !cf_sh_recs || !cf_sh_hands || !cf_sh_acc)
        return; /* no sharing data: what was mapped stays unused */
    __atomic_store_n(&cf_share_on, 1, __ATOMIC_RELEASE);
}

void cf_share_thread(cf_thread *t)
{
    if (t->thread_no)
        return;
    uint32_t n = __atomic_fetch_add(&cf_sh_nthreads, 1, __ATOMIC_RELAXED);
    t->thread_no = n + 1;
    if (n >= 1 && !__atomic_load_n(&cf_share_on, __ATOMIC_ACQUIRE)) {
        cf_sh_lock();
        cf_share_start_locked();
        cf_sh_unlock();
    }
}

void cf_share_fork_child(cf_thread *self)
{
    cf_sh_ticket = 0;
    cf_sh_serving = 0;
    /* The parent's tables stay mapped, unused: a second thread of the child maps new ones. */
    cf_share_on = 0;
    cf_sh_objs = NULL;
    cf_sh_recs = NULL;
    cf_sh_hands = NULL;
    cf_sh_acc = NULL;
    cf_sh_nobjs = cf_sh_nrecs = cf_sh_nhands = 0;
    memset(cf_sh_gknown, 0, sizeof cf_sh_gknown);
    memset(cf_sh_threads, 0, sizeof cf_sh_threads);
    memset(cf_sh_lost, 0, sizeof cf_sh_lost);
    self->share_types = 0;
    self->thread_no = self->thread_no ? 1 : 0; /* the forking thread is the child's first */
    cf_sh_nthreads = self->thread_no;
}

static inline int cf_gm_any(const cf_gmask *m)
{
    return (m->w[0] | m->w[1] | m->w[2] | m->w[3]) != 0;
}

static inline void cf_gm_or(cf_gmask *a, const cf_gmask *b)
{
    for (int i = 0; i < 4; i++)
        a->w[i] |= b->w[i];
}

static inline uint64_t cf_sh_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return x ^ x >> 29;
}

/* The object's entry, inserted if new; NULL when the table is full. */
static cf_shobj *cf_sh_obj(uintptr_t base, uint32_t type)
{
    uint32_t mask = CF_SH_OBJTAB - 1;
    uint32_t h = (uint32_t)cf_sh_mix(base * 64 + type) & mask;
    for (;; h = (h + 1) & mask) {
        cf_shobj *o = &cf_sh_objs[h];
        if (o->base == base && o->type == type)
            return o;
        if (!o->base) {
            if (cf_sh_nobjs >= CF_SH_OBJS)
                return NULL;
            cf_sh_nobjs++;
            o->base = base;
            o->type = type;
            return o;
        }
    }
}

/* The object's record of a thread slot, added if new; NULL when the pool is full. */
static cf_shrec *cf_sh_rec(cf_shobj *o, uint32_t slot)
{
    uint32_t *link = &o->recs;
    while (*link) {
        cf_shrec *r = &cf_sh_recs[*link - 1];
        if (r->slot == slot)
            return r;
        link = &r->next;
    }
    if (cf_sh_nrecs >= CF_SH_RECS)
        return NULL;
    cf_shrec *r = &cf_sh_recs[cf_sh_nrecs++];
    r->slot = slot;
    *link = cf_sh_nrecs;
    o->slots |= (uint16_t)(1u << slot);
    return r;
}

/* Count one handoff (w, t) of `type`; 0 when the table is full. */
static int cf_sh_hand(uint32_t type, const cf_gmask *w, const cf_gmask *t)
{
    uint64_t x = type;
    for (int i = 0; i < 4; i++)
        x = cf_sh_mix(x ^ w->w[i]) + t->w[i];
    uint32_t mask = CF_SH_HANDTAB - 1;
    for (uint32_t h = (uint32_t)cf_sh_mix(x) & mask;; h = (h + 1) & mask) {
        cf_shhand *e = &cf_sh_hands[h];
        if (!e->count) {
            if (cf_sh_nhands >= CF_SH_HANDS)
                return 0;
            cf_sh_nhands++;
            e->type = type;
            e->w = *w;
            e->t = *t;
            e->count = 1;
            return 1;
        }
        if (e->type == type && !memcmp(&e->w, w, sizeof *w) && !memcmp(&e->t, t, sizeof *t)) {
            e->count++;
            return 1;
        }
    }
}

/* The granules of one quad into acc (role index looked up by the caller). */
static inline void cf_sh_quad(cf_shacc *acc, uint64_t q, uint32_t gs)
{
    uint32_t off = (uint32_t)q, size = (uint32_t)(q >> 32) & 0xffff;
    uint32_t g0 = off >> gs, g1 = (off + (size ? size : 1) - 1) >> gs;
    if (g0 >= CF_SH_GRANULES)
        return;
    if (g1 >= CF_SH_GRANULES)
        g1 = CF_SH_GRANULES - 1;
    cf_gmask *m = (q >> 63) ? &acc->w : &acc->r;
    for (uint32_t g = g0; g <= g1; g++)
        m->w[g >> 6] |= 1ull << (g & 63);
}

/* The granule shift of `type`, fixed by the first object of it seen (element size). */
static uint32_t cf_sh_granule(uint32_t type, uintptr_t size)
{
    if (!cf_sh_gknown[type]) {
        uint32_t s = 0;
        while (s < 31 && size > ((uintptr_t)CF_SH_GRANULES << s))
            s++;
        cf_sh_gshift[type] = (uint8_t)s;
        cf_sh_gknown[type] = 1;
    }
    return cf_sh_gshift[type];
}

void cf_share_end(cf_thread *t)
{
    uint32_t n = t->nroles, b = t->thread_no;
    if (!n || !b)
        return;
    if (n > CF_SH_ROLES)
        n = CF_SH_ROLES;
    const cf_role *roles = t->roles;
    uint64_t types = 0;
    for (uint32_t i = 0; i < n; i++)
        if (t->touched >> roles[i].type & 1)
            types |= 1ull << roles[i].type;
    if (!types)
        return;
    uint32_t slot = b - 1 < CF_SH_SLOTS - 1 ? b - 1 : CF_SH_SLOTS - 1;
    uint16_t *map = t->rmap;
    cf_sh_lock();
    memset(cf_sh_acc, 0, (size_t)n * sizeof *cf_sh_acc);
    for (uint64_t m = types; m; m &= m - 1) {
        uint32_t type = (uint32_t)__builtin_ctzll(m);
        const uint64_t *q = NULL;
        uint32_t gs = 0;
        for (uint32_t i = 0; i < n; i++)
            if (roles[i].type == type) {
                if (!q) {
                    q = roles[i].slice;
                    gs = cf_sh_granule(type, roles[i].size);
                }
                map[roles[i].role & 0x7fff] = (uint16_t)(i + 1);
            }
        if (!(t->share_types >> type & 1)) {
            t->share_types |= 1ull << type;
            cf_sh_threads[type]++;
        }
        for (uint32_t k = 0, len = t->len[type]; k < len; k++) {
            uint16_t i = map[(q[k] >> 48) & 0x7fff];
            if (i)
                cf_sh_quad(&cf_sh_acc[i - 1], q[k], gs);
        }
        const cf_sum *s = t->frames[0].sum[type];
        if ((t->frames[0].folded >> type & 1) && s) {
            for (uint32_t k = 0, len = cf_sum_len(s); k < len; k++) {
                uint64_t x = cf_sum_quad(s, k);
                uint16_t i = map[(x >> 48) & 0x7fff];
                if (i)
                    cf_sh_quad(&cf_sh_acc[i - 1], x, gs);
            }
        }
        for (uint32_t i = 0; i < n; i++)
            if (roles[i].type == type)
                map[roles[i].role & 0x7fff] = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        const cf_shacc *a = &cf_sh_acc[i];
        uint32_t type = roles[i].type;
        int wrote = cf_gm_any(&a->w);
        if (!wrote && !cf_gm_any(&a->r))
            continue;
        cf_shobj *o = cf_sh_obj(roles[i].base, type);
        if (!o) {
            cf_sh_lost[type]++;
            continue;
        }
        cf_shrec *r = cf_sh_rec(o, slot);
        if (r) {
            cf_gm_or(&r->r, &a->r);
            cf_gm_or(&r->w, &a->w);
        } else {
            cf_sh_lost[type]++;
        }
        if (o->lw && o->lw != b && !(o->seen >> slot & 1) && cf_gm_any(&o->W)) {
            cf_gmask all = a->r;
            cf_gm_or(&all, &a->w);
            if (!cf_sh_hand(type, &o->W, &all))
                cf_sh_lost[type]++;
            o->seen |= (uint16_t)(1u << slot);
        }
        if (wrote) {
            if (o->lw == b) {
                cf_gm_or(&o->W, &a->w);
            } else {
                o->W = a->w;
                o->lw = b;
            }
            o->seen = (uint16_t)(1u << slot);
        }
    }
    cf_sh_unlock();
}

/* ------------------------------------------------------------------ output */

typedef struct cf_shout {
    void (*put)(void *, const char *, size_t);
    void *arg;
} cf_shout;

static void cf_sh_puts(const cf_shout *o, const char *s)
{
    o->put(o->arg, s, strlen(s));
}

/* The runs of set granules of m as " PFX OFF:SIZE" words (sep before all but the first
 * when pfx is NULL: "OFF:SIZE,OFF:SIZE"). */
static void cf_sh_runs(const cf_shout *o, const cf_gmask *m, uint32_t gs, const char *pfx)
{
    char buf[64];
    int first = 1;
    for (uint32_t g = 0; g < CF_SH_GRANULES;) {
        if (!(m->w[g >> 6] >> (g & 63) & 1)) {
            g++;
            continue;
        }
        uint32_t e = g;
        while (e < CF_SH_GRANULES && (m->w[e >> 6] >> (e & 63) & 1))
            e++;
        unsigned long long off = (unsigned long long)g << gs, len = (unsigned long long)(e - g)
                                                                    << gs;
        if (pfx)
            snprintf(buf, sizeof buf, " %s%llu:%llu", pfx, off, len);
        else
            snprintf(buf, sizeof buf, "%s%llu:%llu", first ? "" : ",", off, len);
        cf_sh_puts(o, buf);
        first = 0;
        g = e;
    }
}

/* The object's record of `slot`, or NULL. */
static const cf_shrec *cf_sh_slot(const cf_shobj *o, uint32_t slot)
{
    for (uint32_t k = o->recs; k; k = cf_sh_recs[k - 1].next)
        if (cf_sh_recs[k - 1].slot == slot)
            return &cf_sh_recs[k - 1];
    return NULL;
}

/* Objects' patterns in a fixed order (slots, then each slot's reads and writes). */
static int cf_sh_cmp(const void *pa, const void *pb)
{
    const cf_shobj *a = &cf_sh_objs[*(const uint32_t *)pa];
    const cf_shobj *b = &cf_sh_objs[*(const uint32_t *)pb];
    if (a->slots != b->slots)
        return a->slots < b->slots ? -1 : 1;
    for (uint32_t s = 0; s < CF_SH_SLOTS; s++) {
        if (!(a->slots >> s & 1))
            continue;
        const cf_shrec *ra = cf_sh_slot(a, s), *rb = cf_sh_slot(b, s);
        int c = memcmp(&ra->r, &rb->r, 2 * sizeof ra->r); /* r then w */
        if (c)
            return c;
    }
    return 0;
}

static void cf_sh_pattern(const cf_shout *o, const cf_shobj *x, uint32_t gs)
{
    char pfx[16];
    for (uint32_t s = 0; s < CF_SH_SLOTS; s++) {
        const cf_shrec *r = (x->slots >> s & 1) ? cf_sh_slot(x, s) : NULL;
        if (!r)
            continue;
        snprintf(pfx, sizeof pfx, "r:%u:", s);
        cf_sh_runs(o, &r->r, gs, pfx);
        snprintf(pfx, sizeof pfx, "w:%u:", s);
        cf_sh_runs(o, &r->w, gs, pfx);
    }
}

void cf_share_dump(int ntypes, void (*put)(void *, const char *, size_t), void *arg)
{
    if (!__atomic_load_n(&cf_share_on, __ATOMIC_ACQUIRE))
        return;
    cf_shout out = {put, arg}, *o = &out;
    char buf[160];
    cf_sh_lock();
    snprintf(buf, sizeof buf, "threads %u\n", __atomic_load_n(&cf_sh_nthreads, __ATOMIC_RELAXED));
    cf_sh_puts(o, buf);
    uint32_t *idx = malloc((size_t)(cf_sh_nobjs ? cf_sh_nobjs : 1) * sizeof *idx);
    for (int type = 0; type < ntypes && type < CF_MAX_TYPES; type++) {
        if (!cf_sh_gknown[type])
            continue;
        uint32_t gs = cf_sh_gshift[type], nshared = 0;
        uint64_t private = 0, lost = cf_sh_lost[type];
        for (uint32_t h = 0; h < CF_SH_OBJTAB; h++) {
            const cf_shobj *x = &cf_sh_objs[h];
            if (!x->base || x->type != (uint32_t)type || !x->slots)
                continue;
            if (!(x->slots & (x->slots - 1)))
                private++;
            else if (idx)
                idx[nshared++] = h;
            else
                lost++; /* no memory to sort the patterns */
        }
        snprintf(buf, sizeof buf, "share %d %llu %llu %llu %llu\n", type, 1ull << gs,
                 (unsigned long long)cf_sh_threads[type], (unsigned long long)private,
                 (unsigned long long)lost);
        cf_sh_puts(o, buf);
        if (nshared)
            qsort(idx, nshared, sizeof *idx, cf_sh_cmp);
        for (uint32_t i = 0; i < nshared;) {
            uint32_t j = i + 1;
            while (j < nshared && cf_sh_cmp(&idx[i], &idx[j]) == 0)
                j++;
            snprintf(buf, sizeof buf, "shobj %d %u", type, j - i);
            cf_sh_puts(o, buf);
            cf_sh_pattern(o, &cf_sh_objs[idx[i]], gs);
            cf_sh_puts(o, "\n");
            i = j;
        }
        for (uint32_t h = 0; h < CF_SH_HANDTAB; h++) {
            const cf_shhand *e = &cf_sh_hands[h];
            if (!e->count || e->type != (uint32_t)type)
                continue;
            snprintf(buf, sizeof buf, "handoff %d %llu ", type, (unsigned long long)e->count);
            cf_sh_puts(o, buf);
            cf_sh_runs(o, &e->w, gs, NULL);
            cf_sh_puts(o, " / ");
            cf_sh_runs(o, &e->t, gs, NULL);
            cf_sh_puts(o, "\n");
        }
    }
    free(idx);
    cf_sh_unlock();
}
