/* cf_core.c - registry of traced objects, invocations, the table of unique access
 * sequences, and writing the raw trace.
 *
 * Design (see docs/raw-trace-format.md and the paper's section IV):
 *  - Registry: objects of target types as (base, span, element size, stride, type).
 *    Small objects live in a hash table keyed by 256-byte granule, large and
 *    strided ones in a sorted array.  Writers (registration, free) take a mutex and
 *    bump a sequence counter (seqlock); the per-access path reads without locks and
 *    retries if a writer was active.  Registering an object replaces one of its type at
 *    its base.  A heap block (malloc & co, configured allocators, typed allocation sites,
 *    new-expressions; cf_alloc.c) is fresh memory, so before its objects are registered
 *    every object overlapping it is forgotten, of any type (issue 27: a pool that
 *    re-carves its buffer at other offsets, SQLite's lookaside, free lists, a chunk
 *    reused for another type without a free cachefit saw; a stale object would take the
 *    new one's accesses), except one that encloses the block from a lower base and is
 *    of another type (a container the block is carved from) or an array of the block's
 *    type on whose element grid it starts (an element handed out: same attribution);
 *    cf_forget_overlapping.  Constructors and globals forget nothing.  Objects
 *    registered are counted per type (raw trace `objects` lines).  A shadow (a byte per
 *    16-byte granule: how many objects meet it) lets the per-access paths drop an
 *    address between objects without a lookup (cf_shadow).
 *  - Invocation: per-thread state; objects touched get role numbers per type in
 *    order of first touch (the previous invocation's first object is armed as the fast
 *    role when an invocation begins and disarmed if another object comes first; it
 *    stays valid while the registry is unchanged; after an invocation on two objects of
 *    one type both are armed and renumbered by first touch when it ends, see
 *    cf_settle_armed); accesses become quads (role,
 *    offset, size, mode) appended to a per-type buffer.
 *  - Operations at every level (issue 26): an entry function called inside another's
 *    invocation begins an invocation of its own kind (a frame, up to CF_MAX_FRAMES; a
 *    recursive call of an active entry is part of its invocation).  It only records where
 *    it begins in each type's buffer: the outer invocation's quads are its quads too, and
 *    at its end the quads since then, their roles numbered by first touch among them, are
 *    its sequence.  The per-access path does not know about frames.  longjmp out of
 *    invocations is seen by the addresses of their scope variables (cf_enter_slow,
 *    cf_leave_nested).
 *  - Long invocations are never dropped: a type's buffer holds 2 * max_accesses quads;
 *    when it fills up, the active invocations whose quads there may be more than
 *    max_accesses fold them into per-invocation summaries (each distinct quad once, in
 *    first-occurrence order, with its hits; cf_make_room); from then on, while it runs
 *    alone, the accesses to its fast role are counted in place (counting mode,
 *    cf_count_*).  An invocation of at most
 *    max_accesses accesses is a literal sequence as before; a longer one a summary,
 *    deduplicated in a table of its own.  Roles are per thread, shared by nested
 *    invocations; an object a nested invocation touches beyond max_objects (an enclosing
 *    long invocation holds them all) is a role of the innermost invocation only, at
 *    roles[max_objects ..) (max_objects more at most), recorded for it, lost for the
 *    enclosing ones (their folds skip its quads: cf_fold_frame) and taken out of the
 *    buffers when it ends (cf_release_own).  Objects beyond that, distinct accesses
 *    beyond max_distinct and entries nested too deep are left out and counted (guards);
 *    the invocation still counts.
 *  - The objects' real alignment (issue 26): at the end of every invocation (any kind)
 *    each object it touched counts 1 at its base address modulo 64 in the thread's
 *    counters (one increment on the inline end of __cachefit_leave), added to the
 *    process's with the invocation counts (cf_publish); raw trace `align` lines.
 *  - At invocation end each per-type sequence is compared with the thread's recent
 *    ones (a two-way slot per length and last quad), else hashed and looked up (lock-free) in a table of unique sequences, and
 *    its counter incremented; only a new sequence takes
 *    the table mutex and allocates (mmap), never the per-access path.
 *  - The process writes a snapshot at exit, on cachefit_dump() and (optionally) on
 *    a signal, to $CACHEFIT_TRACE_DIR/cachefit-<pid>.raw; nothing if unset.
 * This file must not call malloc (it is called from inside malloc wrappers and
 * from constructors that may run before the C library is fully set up).
 */
#define _GNU_SOURCE
#include "cf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

CF_TLS cf_thread cf_self;
uintptr_t cf_lo = UINTPTR_MAX;
uintptr_t cf_span = 0;
unsigned long cf_regseq = 0;
/* The kill version (issue 31): changed (by 2, inside a write section of cf_regseq) only by
 * a change that can make something a lookup found wrong, i.e. an object removed (freed,
 * forgotten, registered again) or one registered over another (nested).  What a lookup
 * found (a role, an object cache entry, an object left out, the fast roles) stays valid
 * while it is unchanged, so registering a new object elsewhere (an interpreter allocating
 * as it runs) disturbs none of it; what a lookup did not find (a gap between objects,
 * cf_resolve's and cf_in_gap's negative caches) is valid while cf_regseq is unchanged. */
unsigned long cf_killseq = 0;

/* The shadow (issue 31): one byte per 16-byte granule of the address space below 2^47
 * (a MAP_NORESERVE mapping: only the pages of granules near registered objects are ever
 * written), the number of registered objects that meet the granule (255: that many or
 * more, kept for good).  An access is attributed by its first byte's address (the object
 * holding it, cf_resolve), so an access starting in a granule whose byte is 0 is recorded
 * nowhere: the per-access paths return at once for such addresses between objects (an
 * interpreter's heap, where traced objects and others alternate), without the registry.
 * Written under cf_reg_mu with the registry; read without locks, like the registry.  NULL
 * when unavailable (the mapping refused, CACHEFIT_SHADOW=0, or an object above 2^47 or
 * larger than 1 GiB: then for good), and the paths look in the registry as before. */
unsigned char *cf_shadow = NULL;
static int cf_shadow_state; /* 0: not set up yet; 1: on; -1: off */
#define CF_SHADOW_TOP ((uintptr_t)1 << 47)
#define CF_SHADOW_MAX_SPAN ((uintptr_t)1 << 30)

/* The link step of a profile build defines this blob (text, see
 * docs/raw-trace-format.md) and patches it after linking with the globals found in
 * the debug information and the type layouts.  Weak: absent when the runtime is
 * linked by hand. */
extern char __cachefit_blob[] __attribute__((weak));

uint32_t cf_max_accesses = 4096;
static uint32_t cf_max_objects = 64;
static uint64_t cf_max_sequences = 1000000;
static char cf_trace_dir[4096];
static int cf_dump_signal;
static volatile sig_atomic_t cf_dump_requested;
static struct timespec cf_start;

/* ------------------------------------------------------------------ helpers */

static void *cf_mmap(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint64_t cf_env_u64(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end || v < lo || v > hi) {
        /* Said once (at start-up), not silently: write(2), no stdio (no malloc here). */
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "cachefit: %s=%s is not in %llu..%llu; using %llu\n", name, s,
                         (unsigned long long)lo, (unsigned long long)hi,
                         (unsigned long long)dflt);
        if (n > 0)
            (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        return dflt;
    }
    return v;
}

/* ------------------------------------------------------------------ types */

static pthread_mutex_t cf_type_mu = PTHREAD_MUTEX_INITIALIZER;
static char cf_type_names[CF_MAX_TYPES][CF_NAME_MAX];
static int cf_ntypes;
enum { CF_MAX_ALIASES = 256 };
static char cf_alias_from[CF_MAX_ALIASES][CF_NAME_MAX];
static int cf_alias_to[CF_MAX_ALIASES];
static int cf_naliases;
static char cf_entry_names[CF_MAX_ENTRIES][CF_NAME_MAX];
static int cf_nentries;
static uint64_t cf_entry_count[CF_MAX_ENTRIES];

/* "struct obj", " obj " and "obj" all name type obj. */
static void cf_normalize(const char *in, char *out, size_t cap)
{
    while (*in == ' ' || *in == '\t')
        in++;
    static const char *const kw[] = {"struct ", "class ", "union ", "enum "};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        size_t n = strlen(kw[i]);
        if (strncmp(in, kw[i], n) == 0) {
            in += n;
            while (*in == ' ')
                in++;
            break;
        }
    }
    size_t n = 0;
    for (; *in && n + 1 < cap; in++)
        if (*in != ' ' && *in != '\t' && *in != '\n')
            out[n++] = *in;
    out[n] = 0;
}

/* Whether the blob maps some "NAME@FP" to a definition's type (cf_alloc.c). */
int cf_named_definitions CF_HIDDEN;

static int cf_type_find_locked(const char *norm)
{
    for (int i = 0; i < cf_ntypes; i++)
        if (strcmp(cf_type_names[i], norm) == 0)
            return i;
    for (int i = 0; i < cf_naliases; i++)
        if (strcmp(cf_alias_from[i], norm) == 0)
            return cf_alias_to[i];
    return -1;
}

int cf_type_id(const char *name)
{
    char norm[CF_NAME_MAX];
    if (!name)
        return -1;
    cf_normalize(name, norm, sizeof norm);
    if (!norm[0])
        return -1;
    pthread_mutex_lock(&cf_type_mu);
    int id = cf_type_find_locked(norm);
    /* "dict@FP" (a definition's layout fingerprint, issue 27) is type "dict" unless the
     * blob names that definition (one type per definition when a name has several). */
    char *at = strchr(norm, '@');
    if (id < 0 && at && at != norm) {
        *at = 0;
        id = cf_type_find_locked(norm);
        *at = '@';
    }
    if (id < 0 && cf_ntypes < CF_MAX_TYPES) {
        id = cf_ntypes;
        memcpy(cf_type_names[id], norm, sizeof norm);
        __atomic_store_n(&cf_ntypes, cf_ntypes + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cf_type_mu);
    return id;
}

/* The id of an existing type (or alias) named `name`, or -1; makes none. */
int cf_type_lookup(const char *name)
{
    char norm[CF_NAME_MAX];
    if (!name)
        return -1;
    cf_normalize(name, norm, sizeof norm);
    pthread_mutex_lock(&cf_type_mu);
    int id = norm[0] ? cf_type_find_locked(norm) : -1;
    pthread_mutex_unlock(&cf_type_mu);
    return id;
}

/* ------------------------------------------------------------------ registry */

enum { CF_SMALL_MAX = 64 * 1024 };

typedef struct cf_slot {
    uintptr_t key; /* granule number + 1; 0 = empty */
    cf_obj o;
} cf_slot;

typedef struct cf_htab {
    size_t mask;
    size_t used;
    cf_slot s[];
} cf_htab;

typedef struct cf_rtab {
    size_t n;
    size_t cap;
    cf_obj e[];
} cf_rtab;

/* cf_obj.flags: the object overlaps another registered object (a base class's object at
 * its derived object's address, a traced member inside a traced record, an element of a
 * pool's array registered again when handed out).  An access inside it counts for every
 * registered object that holds it (cf_record_nested), so it never takes the per-access
 * path's shortcuts: its roles carry CF_SEQ_NESTED in `seq`, a registry version that never
 * is the current one, and never become the fast role.  Set on both objects when the second
 * is registered (every change of the flag is a registry change: cached roles are confirmed
 * again); kept when the other one is forgotten (the lookups then find one object). */
enum { CF_OBJ_NESTED = 1u, CF_NEST_MAX = 8 };
#define CF_SEQ_NESTED (~(~0ul >> 1))

static pthread_mutex_t cf_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static cf_htab *cf_htable;
static cf_rtab *cf_rtable;
static uintptr_t cf_reg_hi;
/* Objects registered per type (an array counts its elements; raw trace `objects` lines,
 * issue 27): tells "no object of T was registered" from "none was touched". */
static uint64_t cf_st_registered[CF_MAX_TYPES];
/* Objects per type still registered when a new heap block for objects of other types was
 * allocated over them (raw trace `reused` lines): their memory was given back without a
 * free cachefit saw (a pool, a lookaside list) and handed out again; until then, accesses
 * to it counted for them.  A block of the same type over one (a free list's slot handed
 * out again, a buffer carved again for the next object, at the same place or near it) is
 * not counted: its type's attribution goes on. */
static uint64_t cf_st_reused[CF_MAX_TYPES];

static inline size_t cf_ghash(uintptr_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static inline void cf_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static void cf_seq_write_begin(void)
{
    WR(cf_regseq, cf_regseq + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void cf_seq_write_end(void)
{
    __atomic_store_n(&cf_regseq, cf_regseq + 1, __ATOMIC_RELEASE);
}

/* Inside a write section: what lookups found may be wrong now (cf_killseq). */
static void cf_kill_locked(void)
{
    __atomic_store_n(&cf_killseq, cf_killseq + 2, __ATOMIC_RELEASE);
}

static void cf_slot_store(cf_slot *d, uintptr_t key, const cf_obj *o)
{
    WR(d->o.base, o->base);
    WR(d->o.span, o->span);
    WR(d->o.elem, o->elem);
    WR(d->o.stride, o->stride);
    WR(d->o.type, o->type);
    WR(d->o.flags, o->flags);
    WR(d->key, key);
}

/* A registered range as a reader sees it: relaxed loads, valid once the caller has checked
 * cf_regseq; `base` and `span` are the values the caller has already loaded and tested. */
static inline void cf_obj_load(cf_obj *out, const cf_obj *o, uintptr_t base, uintptr_t span)
{
    out->base = base;
    out->span = span;
    out->elem = RD(o->elem);
    out->stride = RD(o->stride);
    out->type = RD(o->type);
    out->flags = RD(o->flags);
}

/* Put o's slot for granule key - 1; 1 when the probe passed another object of that
 * granule overlapping o (linear probing: every slot of the key lies on the way). */
static int cf_h_put(cf_htab *t, uintptr_t key, const cf_obj *o)
{
    size_t i = cf_ghash(key) & t->mask;
    int overlap = 0;
    while (t->s[i].key) {
        const cf_obj *v = &t->s[i].o;
        overlap |= t->s[i].key == key && v->base < o->base + o->span &&
                   o->base < v->base + v->span;
        i = (i + 1) & t->mask;
    }
    cf_slot_store(&t->s[i], key, o);
    t->used++;
    return overlap;
}

/* Backward-shift deletion keeps linear probing free of tombstones. */
static void cf_h_del(cf_htab *t, size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        uintptr_t kj = t->s[j].key;
        if (!kj)
            break;
        size_t k = cf_ghash(kj) & t->mask;
        int stays = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        cf_slot_store(&t->s[i], kj, &t->s[j].o);
        i = j;
    }
    WR(t->s[i].key, (uintptr_t)0);
    t->used--;
}

static cf_htab *cf_h_new(size_t cap)
{
    cf_htab *t = cf_mmap(sizeof(cf_htab) + cap * sizeof(cf_slot));
    if (t)
        t->mask = cap - 1;
    return t;
}

/* Make room for `extra` more slots (caller holds the lock inside a write section).
 * Old tables are never unmapped: a reader may still be walking one. */
static int cf_h_reserve(size_t extra)
{
    cf_htab *t = cf_htable;
    size_t cap = t ? t->mask + 1 : 0;
    size_t need = (t ? t->used : 0) + extra;
    if (t && need * 2 <= cap)
        return 1;
    size_t ncap = cap ? cap : 4096;
    while (need * 2 > ncap)
        ncap *= 2;
    cf_htab *n = cf_h_new(ncap);
    if (!n)
        return 0;
    if (t)
        for (size_t i = 0; i <= t->mask; i++)
            if (t->s[i].key)
                cf_h_put(n, t->s[i].key, &t->s[i].o);
    __atomic_store_n(&cf_htable, n, __ATOMIC_RELEASE);
    return 1;
}

/* gap: narrowed to the bytes around a that no object of the granule's entries meets. */
static int cf_h_lookup(const cf_htab *t, uintptr_t a, cf_obj *out, int *granule_used,
                       uintptr_t gap[2])
{
    if (!t)
        return 0;
    size_t mask = t->mask;
    uintptr_t key = (a >> CF_GRAN_SHIFT) + 1;
    size_t i = cf_ghash(key) & mask;
    for (size_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
        uintptr_t k = RD(t->s[i].key);
        if (!k)
            return 0;
        if (k != key)
            continue;
        *granule_used = 1;
        uintptr_t base = RD(t->s[i].o.base), span = RD(t->s[i].o.span);
        if (a - base < span) {
            cf_obj_load(out, &t->s[i].o, base, span);
            return 1;
        }
        if (base > a) {
            if (base < gap[1])
                gap[1] = base;
        } else if (base + span > gap[0]) {
            gap[0] = base + span;
        }
    }
    return 0;
}

/* Index of the last range whose base <= a, or -1. */
static long cf_r_floor(const cf_rtab *r, size_t n, uintptr_t a)
{
    long lo = 0, hi = (long)n - 1, best = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (RD(r->e[mid].base) <= a) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

static int cf_r_lookup(const cf_rtab *r, uintptr_t a, cf_obj *out, int *granule_used,
                       int *range_meets)
{
    if (!r)
        return 0;
    size_t n = RD(r->n);
    if (n > r->cap)
        n = r->cap;
    uintptr_t g0 = a & ~(((uintptr_t)1 << CF_GRAN_SHIFT) - 1);
    uintptr_t g1 = g0 + ((uintptr_t)1 << CF_GRAN_SHIFT);
    /* Any range starting inside the granule, or one of the ranges before it reaching in. */
    long gi = cf_r_floor(r, n, g1 - 1);
    for (long k = gi; k >= 0 && k > gi - 4; k--) {
        uintptr_t base = RD(r->e[k].base);
        if (base >= g0 || base + RD(r->e[k].span) > g0)
            *granule_used = *range_meets = 1;
    }
    long i = cf_r_floor(r, n, a);
    /* Ranges never overlap each other except when one type nests another; look
     * back a few entries for an enclosing range. */
    for (long k = i; k >= 0 && k > i - 4; k--) {
        uintptr_t base = RD(r->e[k].base), span = RD(r->e[k].span);
        if (a - base < span) {
            cf_obj_load(out, &r->e[k], base, span);
            return 1;
        }
    }
    return 0;
}

/* Lock-free lookup: 0 = not in any registered range, 1 = inside an object
 * (out = the range, *seq = the registry version it is valid for).  When 0 and gap is not
 * NULL: [gap[0], gap[1]) around a, inside a's granule, meets no object (empty: unknown). */
static int cf_lookup_gap(uintptr_t a, cf_obj *out, unsigned long *seq, int *granule_used,
                         uintptr_t gap[2], unsigned long *rseq)
{
    for (;;) {
        *granule_used = 0;
        int range_meets = 0;
        uintptr_t g[2];
        g[0] = a & ~(((uintptr_t)1 << CF_GRAN_SHIFT) - 1);
        g[1] = g[0] + ((uintptr_t)1 << CF_GRAN_SHIFT);
        unsigned long s1 = __atomic_load_n(&cf_regseq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            cf_relax();
            continue;
        }
        unsigned long k1 = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
        const cf_htab *h = __atomic_load_n(&cf_htable, __ATOMIC_ACQUIRE);
        const cf_rtab *r = __atomic_load_n(&cf_rtable, __ATOMIC_ACQUIRE);
        int found = cf_h_lookup(h, a, out, granule_used, g) ||
                    cf_r_lookup(r, a, out, granule_used, &range_meets);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (RD(cf_regseq) == s1) {
            *seq = k1;
            if (rseq)
                *rseq = s1;
            if (gap) {
                /* Ranges are seen by a few neighbours only: a gap where none meets. */
                gap[0] = found || range_meets ? 0 : g[0];
                gap[1] = found || range_meets ? 0 : g[1];
            }
            return found;
        }
    }
}

static int cf_lookup(uintptr_t a, cf_obj *out, unsigned long *seq, int *granule_used)
{
    return cf_lookup_gap(a, out, seq, granule_used, NULL, NULL);
}

/* Lock-free like cf_lookup: every registered range that holds `a` (at most `max`, into
 * out[]); the number found, *seq the registry version they are valid for, and [*lo, *hi)
 * around `a` where no other range of a's granule begins or ends (within the granule).  A
 * range in the sorted table is found when it is among the few before `a` (as in
 * cf_r_lookup). */
static int cf_lookup_all(uintptr_t a, cf_obj *out, int max, unsigned long *seq,
                         uintptr_t *lo, uintptr_t *hi)
{
    for (;;) {
        unsigned long s1 = __atomic_load_n(&cf_regseq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            cf_relax();
            continue;
        }
        unsigned long k1 = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
        int n = 0;
        uintptr_t nlo = a & ~(((uintptr_t)1 << CF_GRAN_SHIFT) - 1);
        uintptr_t nhi = nlo + ((uintptr_t)1 << CF_GRAN_SHIFT);
        const cf_htab *h = __atomic_load_n(&cf_htable, __ATOMIC_ACQUIRE);
        if (h) {
            uintptr_t key = (a >> CF_GRAN_SHIFT) + 1;
            size_t i = cf_ghash(key) & h->mask;
            for (size_t k = 0; k <= h->mask; k++, i = (i + 1) & h->mask) {
                uintptr_t kk = RD(h->s[i].key);
                if (!kk)
                    break;
                if (kk != key)
                    continue;
                uintptr_t base = RD(h->s[i].o.base), span = RD(h->s[i].o.span);
                if (a - base < span) {
                    if (n < max)
                        cf_obj_load(&out[n++], &h->s[i].o, base, span);
                } else if (base > a) {
                    nhi = base < nhi ? base : nhi;
                } else if (base + span > nlo) {
                    nlo = base + span;
                }
            }
        }
        const cf_rtab *r = __atomic_load_n(&cf_rtable, __ATOMIC_ACQUIRE);
        if (r) {
            size_t rn = RD(r->n);
            if (rn > r->cap)
                rn = r->cap;
            long f = cf_r_floor(r, rn, a);
            if (f + 1 < (long)rn && RD(r->e[f + 1].base) < nhi)
                nhi = RD(r->e[f + 1].base);
            for (long k = f; k >= 0 && k > f - 4; k--) {
                uintptr_t base = RD(r->e[k].base), span = RD(r->e[k].span);
                if (a - base < span) {
                    if (n < max)
                        cf_obj_load(&out[n++], &r->e[k], base, span);
                } else if (base + span > nlo) {
                    nlo = base + span;
                }
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (RD(cf_regseq) == s1) {
            *seq = k1;
            *lo = nlo;
            *hi = nhi;
            return n;
        }
    }
}

/* The first registered range that holds or follows `a` within a's 256-byte granule
 * (for ranges in the hash table) or anywhere (sorted table): 1 and *out, or 0.  Used
 * for copies and fills that span several objects; lock-free like cf_lookup. */
static int cf_next_object(uintptr_t a, cf_obj *out, unsigned long *seq)
{
    for (;;) {
        unsigned long s1 = __atomic_load_n(&cf_regseq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            cf_relax();
            continue;
        }
        unsigned long k1 = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
        int found = 0;
        const cf_htab *h = __atomic_load_n(&cf_htable, __ATOMIC_ACQUIRE);
        if (h) {
            uintptr_t key = (a >> CF_GRAN_SHIFT) + 1;
            size_t i = cf_ghash(key) & h->mask;
            for (size_t n = 0; n <= h->mask; n++, i = (i + 1) & h->mask) {
                uintptr_t k = RD(h->s[i].key);
                if (!k)
                    break;
                uintptr_t base = RD(h->s[i].o.base), span = RD(h->s[i].o.span);
                if (k != key || base + span <= a)
                    continue;
                if (!found || base < out->base) {
                    cf_obj_load(out, &h->s[i].o, base, span);
                    found = 1;
                }
            }
        }
        const cf_rtab *r = __atomic_load_n(&cf_rtable, __ATOMIC_ACQUIRE);
        if (r) {
            size_t n = RD(r->n);
            if (n > r->cap)
                n = r->cap;
            long f = cf_r_floor(r, n, a);
            for (long k = f < 0 ? 0 : f; k < (long)n && k <= f + 1; k++) {
                uintptr_t base = RD(r->e[k].base), span = RD(r->e[k].span);
                if (base + span <= a)
                    continue;
                if (!found || base < out->base) {
                    cf_obj_load(out, &r->e[k], base, span);
                    found = 1;
                }
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (RD(cf_regseq) == s1) {
            *seq = k1;
            return found;
        }
    }
}

/* Before the first registration (cf_reg_mu held): map the shadow, unless turned off. */
static void cf_shadow_setup_locked(void)
{
    if (cf_shadow_state)
        return;
    cf_shadow_state = -1;
    const char *e = getenv("CACHEFIT_SHADOW");
    if (e && (!strcmp(e, "0") || !strcmp(e, "no") || !strcmp(e, "off") || !strcmp(e, "false")))
        return;
    void *p = mmap(NULL, CF_SHADOW_TOP >> CF_SHADOW_SHIFT, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    cf_shadow_state = 1;
    __atomic_store_n(&cf_shadow, (unsigned char *)p, __ATOMIC_RELEASE);
}

/* Count the object [base, base + span) in (add) or out of the granules it meets
 * (cf_reg_mu held). */
static void cf_shadow_count_locked(uintptr_t base, uintptr_t span, int add)
{
    unsigned char *sh = cf_shadow;
    if (!sh)
        return;
    if (span > CF_SHADOW_MAX_SPAN || base + span > CF_SHADOW_TOP) {
        cf_shadow_state = -1; /* an object it cannot hold: off for good */
        __atomic_store_n(&cf_shadow, (unsigned char *)NULL, __ATOMIC_RELEASE);
        return;
    }
    uintptr_t g1 = (base + span - 1) >> CF_SHADOW_SHIFT;
    for (uintptr_t g = base >> CF_SHADOW_SHIFT; g <= g1; g++) {
        unsigned char v = sh[g];
        if (v == 255 || (!add && v == 0))
            continue;
        __atomic_store_n(&sh[g], (unsigned char)(add ? v + 1 : v - 1), __ATOMIC_RELAXED);
    }
}

static int cf_remove_locked(uintptr_t base, int type)
{
    int removed = 0;
    cf_htab *t = cf_htable;
    if (t) {
        uintptr_t key = (base >> CF_GRAN_SHIFT) + 1;
        size_t i = cf_ghash(key) & t->mask;
        cf_obj victim;
        int have = 0;
        for (size_t n = 0; n <= t->mask && t->s[i].key; n++, i = (i + 1) & t->mask) {
            if (t->s[i].key == key && t->s[i].o.base == base &&
                (type < 0 || (int)t->s[i].o.type == type)) {
                victim = t->s[i].o;
                have = 1;
                break;
            }
        }
        if (have) {
            /* Remove the object's slot in every granule it covers. */
            uintptr_t g0 = victim.base >> CF_GRAN_SHIFT;
            uintptr_t g1 = (victim.base + victim.span - 1) >> CF_GRAN_SHIFT;
            for (uintptr_t g = g0; g <= g1; g++) {
                size_t j = cf_ghash(g + 1) & t->mask;
                for (size_t n = 0; n <= t->mask && t->s[j].key; n++, j = (j + 1) & t->mask) {
                    if (t->s[j].key == g + 1 && t->s[j].o.base == victim.base &&
                        t->s[j].o.type == victim.type) {
                        cf_h_del(t, j);
                        break;
                    }
                }
            }
            cf_shadow_count_locked(victim.base, victim.span, 0);
            removed++;
        }
    }
    cf_rtab *r = cf_rtable;
    if (r) {
        for (size_t i = 0; i < r->n;) {
            if (r->e[i].base == base && (type < 0 || (int)r->e[i].type == type)) {
                cf_shadow_count_locked(r->e[i].base, r->e[i].span, 0);
                for (size_t k = i; k + 1 < r->n; k++) {
                    WR(r->e[k].base, r->e[k + 1].base);
                    WR(r->e[k].span, r->e[k + 1].span);
                    WR(r->e[k].elem, r->e[k + 1].elem);
                    WR(r->e[k].stride, r->e[k + 1].stride);
                    WR(r->e[k].type, r->e[k + 1].type);
                    WR(r->e[k].flags, r->e[k + 1].flags);
                }
                WR(r->n, r->n - 1);
                removed++;
            } else {
                i++;
            }
        }
    }
    if (removed)
        cf_kill_locked();
    return removed;
}

static int cf_r_insert_locked(const cf_obj *o)
{
    cf_rtab *r = cf_rtable;
    if (!r || r->n == r->cap) {
        size_t ncap = r ? r->cap * 2 : 256;
        cf_rtab *n = cf_mmap(sizeof(cf_rtab) + ncap * sizeof(cf_obj));
        if (!n)
            return 0;
        n->cap = ncap;
        if (r) {
            memcpy(n->e, r->e, r->n * sizeof(cf_obj));
            n->n = r->n;
        }
        __atomic_store_n(&cf_rtable, n, __ATOMIC_RELEASE);
        r = n;
    }
    size_t pos = r->n;
    while (pos > 0 && r->e[pos - 1].base > o->base) {
        cf_obj *d = &r->e[pos], *s = &r->e[pos - 1];
        WR(d->base, s->base);
        WR(d->span, s->span);
        WR(d->elem, s->elem);
        WR(d->stride, s->stride);
        WR(d->type, s->type);
        WR(d->flags, s->flags);
        pos--;
    }
    cf_obj *d = &r->e[pos];
    WR(d->base, o->base);
    WR(d->span, o->span);
    WR(d->elem, o->elem);
    WR(d->stride, o->stride);
    WR(d->type, o->type);
    WR(d->flags, o->flags);
    WR(r->n, r->n + 1);
    return 1;
}

/* Set CF_OBJ_NESTED on the registered object (base, type): all its slots in the hash
 * table, its entry in the sorted one (caller holds the lock inside a write section). */
static void cf_flag_nested_locked(uintptr_t base, uint32_t type, uintptr_t span)
{
    cf_htab *t = cf_htable;
    if (t && span <= CF_SMALL_MAX) {
        uintptr_t g0 = base >> CF_GRAN_SHIFT, g1 = (base + span - 1) >> CF_GRAN_SHIFT;
        for (uintptr_t g = g0; g <= g1; g++) {
            size_t j = cf_ghash(g + 1) & t->mask;
            for (size_t n = 0; n <= t->mask && t->s[j].key; n++, j = (j + 1) & t->mask)
                if (t->s[j].key == g + 1 && t->s[j].o.base == base && t->s[j].o.type == type)
                    WR(t->s[j].o.flags, t->s[j].o.flags | CF_OBJ_NESTED);
        }
    }
    cf_rtab *r = cf_rtable;
    if (r && span > CF_SMALL_MAX)
        for (size_t i = 0; i < r->n; i++)
            if (r->e[i].base == base && r->e[i].type == type)
                WR(r->e[i].flags, r->e[i].flags | CF_OBJ_NESTED);
}

/* Do the registered objects a and b, overlapping, attribute every address they share to
 * the same element (same type, element size and stride, bases on one grid: a pool's array
 * and an element or run of elements handed out of it)?  Then neither is nested: a lookup
 * finding either gives the same role. */
static int cf_same_elements(const cf_obj *a, const cf_obj *b)
{
    uintptr_t d = a->base > b->base ? a->base - b->base : b->base - a->base;
    return a->type == b->type && a->elem == b->elem && a->stride == b->stride &&
           d % a->stride == 0;
}

/* Flag the object `o` (registered already) and every other registered object overlapping
 * it as nested (CF_OBJ_NESTED; caller holds the lock inside a write section), except those
 * with the same elements (cf_same_elements).  The hash table is probed at o's granules,
 * the sorted table scanned (it holds only objects above 64 KiB, few). */
static void cf_mark_nested_locked(const cf_obj *o)
{
    uintptr_t lo = o->base, hi = o->base + o->span;
    int found = 0;
    cf_htab *t = cf_htable;
    if (t) {
        uintptr_t g0 = lo >> CF_GRAN_SHIFT, g1 = (hi - 1) >> CF_GRAN_SHIFT;
        if (g1 - g0 > t->mask)
            g1 = g0 + t->mask;
        for (uintptr_t g = g0; g <= g1; g++) {
            size_t i = cf_ghash(g + 1) & t->mask;
            for (size_t n = 0; n <= t->mask && t->s[i].key; n++, i = (i + 1) & t->mask) {
                const cf_obj *v = &t->s[i].o;
                if (t->s[i].key != g + 1 || (v->base == o->base && v->type == o->type) ||
                    v->base >= hi || v->base + v->span <= lo || cf_same_elements(v, o))
                    continue;
                found = 1;
                if (!(v->flags & CF_OBJ_NESTED))
                    cf_flag_nested_locked(v->base, v->type, v->span);
            }
        }
    }
    cf_rtab *r = cf_rtable;
    if (r)
        for (size_t i = 0; i < r->n && r->e[i].base < hi; i++) {
            const cf_obj *v = &r->e[i];
            if ((v->base == o->base && v->type == o->type) || v->base + v->span <= lo ||
                cf_same_elements(v, o))
                continue;
            found = 1;
            if (!(v->flags & CF_OBJ_NESTED))
                WR(r->e[i].flags, v->flags | CF_OBJ_NESTED);
        }
    if (found) {
        cf_flag_nested_locked(o->base, o->type, o->span);
        cf_kill_locked();
    }
}

void cf_register(uintptr_t base, uintptr_t count, uintptr_t elem, uintptr_t stride, int type,
                 uint32_t flags)
{
    if (type < 0 || !base || !count || !elem)
        return;
    if (stride < elem)
        stride = elem;
    if (elem > UINT32_MAX || stride > UINT32_MAX || count > UINTPTR_MAX / stride)
        return;
    cf_obj o = {base, count * stride, (uint32_t)elem, (uint32_t)stride, (uint32_t)type, flags};
    if (o.span == 0 || base + o.span < base)
        return;
    pthread_mutex_lock(&cf_reg_mu);
    cf_shadow_setup_locked();
    cf_seq_write_begin();
    cf_remove_locked(base, type); /* re-registration replaces */
    int ok, overlap = 1; /* a large object: cf_mark_nested_locked looks */
    if (o.span <= CF_SMALL_MAX) {
        uintptr_t g0 = base >> CF_GRAN_SHIFT, g1 = (base + o.span - 1) >> CF_GRAN_SHIFT;
        ok = cf_h_reserve(g1 - g0 + 1);
        overlap = cf_rtable && cf_rtable->n; /* maybe inside a large one */
        if (ok)
            for (uintptr_t g = g0; g <= g1; g++)
                overlap |= cf_h_put(cf_htable, g + 1, &o);
    } else {
        ok = cf_r_insert_locked(&o);
    }
    if (ok) {
        cf_shadow_count_locked(o.base, o.span, 1);
        if (overlap)
            cf_mark_nested_locked(&o);
        WR(cf_st_registered[type], cf_st_registered[type] + count);
        uintptr_t lo = RD(cf_lo), hi = cf_reg_hi;
        if (base < lo)
            lo = base;
        if (base + o.span > hi)
            hi = base + o.span;
        cf_reg_hi = hi;
        /* Widen the span first, then lower the base: every address accepted
         * before stays accepted in between. */
        WR(cf_span, hi - lo);
        WR(cf_lo, lo);
    }
    cf_seq_write_end();
    pthread_mutex_unlock(&cf_reg_mu);
}

/* Is the registered object `o` stale once a heap block [lo, hi) holding objects of the
 * types in the mask `types` is registered?  Every object overlapping the block is, except
 * one that encloses it from a lower base and is either of another type (a container the
 * block was carved from: the block lies in one of its elements, with the padding after it,
 * as an object is carved out of one object; an array the block crosses elements of was
 * freed without cachefit seeing it, as into SQLite's lookaside, and its memory reused) or
 * an array of one of the block's types on whose element grid the block starts (a pool of
 * elements handing one out: the same attribution); with `own_only`, also every object of
 * a type not in `types` (cf_forget_own_types). */
static int cf_stale_under(const cf_obj *o, uintptr_t lo, uintptr_t hi, uint64_t types,
                          int own_only)
{
    if (o->base >= hi || o->base + o->span <= lo)
        return 0;
    if (own_only && (o->type >= 64 || !((types >> o->type) & 1)))
        return 0;
    if (o->base < lo && o->base + o->span >= hi) {
        if (o->type >= 64 || !((types >> o->type) & 1))
            return hi - (o->base + (lo - o->base) / o->stride * o->stride) > o->stride;
        if (o->span > o->stride && (lo - o->base) % o->stride == 0)
            return 0;
    }
    return 1;
}

/* Forget the objects a new heap block [base, base + len) makes stale (issue 27; see
 * cf_stale_under): a pool that carves objects at other offsets of its buffer, a free list
 * or a chunk reused for another type without a free cachefit saw.  Writers only: the
 * registry is scanned under the mutex, and the write section (which invalidates the
 * readers' cached roles) is opened only when something is removed.  The hash table is
 * probed at each granule of the block (or scanned whole when the block has more granules
 * than it has slots), the sorted array scanned (it holds only objects above 64 KiB). */
/* Count v (just forgotten for a new heap block holding the types in `types`) in
 * cf_st_reused, unless the block holds its type too. */
static void cf_count_reused(const cf_obj *v, uint64_t types)
{
    if (v->type < 64 && !(types >> v->type & 1))
        WR(cf_st_reused[v->type], cf_st_reused[v->type] + 1);
}

static inline __attribute__((always_inline)) void cf_forget_stale(uintptr_t base, uintptr_t len,
                                                                uint64_t types, int own_only,
                                                                int reused)
{
    if (!base || !len || base + len < base)
        return;
    uintptr_t lo = base, hi = base + len;
    int writing = 0;
    pthread_mutex_lock(&cf_reg_mu);
    if (lo < cf_reg_hi && hi > RD(cf_lo)) {
        cf_htab *t;
    again:
        t = cf_htable;
        if (t) {
            uintptr_t g0 = lo >> CF_GRAN_SHIFT, g1 = (hi - 1) >> CF_GRAN_SHIFT;
            if (g1 - g0 >= t->mask) {
                for (size_t i = 0; i <= t->mask; i++)
                    if (t->s[i].key && cf_stale_under(&t->s[i].o, lo, hi, types, own_only)) {
                        cf_obj v = t->s[i].o;
                        if (!writing++)
                            cf_seq_write_begin();
                        if (!cf_remove_locked(v.base, (int)v.type))
                            goto done;
                        if (reused)
                            cf_count_reused(&v, types);
                        goto again; /* slots moved: scan again */
                    }
            } else {
                for (uintptr_t g = g0; g <= g1; g++) {
                    size_t i = cf_ghash(g + 1) & t->mask;
                    for (size_t n = 0; n <= t->mask && t->s[i].key; n++, i = (i + 1) & t->mask) {
                        if (t->s[i].key != g + 1 ||
                            !cf_stale_under(&t->s[i].o, lo, hi, types, own_only))
                            continue;
                        cf_obj v = t->s[i].o;
                        if (!writing++)
                            cf_seq_write_begin();
                        if (!cf_remove_locked(v.base, (int)v.type))
                            goto done;
                        if (reused)
                            cf_count_reused(&v, types);
                        goto again; /* slots moved: probe again (removals are rare) */
                    }
                }
            }
        }
        cf_rtab *r = cf_rtable;
        if (r)
            for (size_t i = 0; i < r->n;) {
                if (cf_stale_under(&r->e[i], lo, hi, types, own_only)) {
                    cf_obj v = r->e[i];
                    if (!writing++)
                        cf_seq_write_begin();
                    if (!cf_remove_locked(v.base, (int)v.type))
                        goto done;
                    if (reused)
                        cf_count_reused(&v, types);
                    goto again;
                } else {
                    i++;
                }
            }
    }
done:
    if (writing)
        cf_seq_write_end();
    pthread_mutex_unlock(&cf_reg_mu);
}

void cf_forget_overlapping(uintptr_t base, uintptr_t len, uint64_t types)
{
    cf_forget_stale(base, len, types, 0, 0);
}

/* The same for a new heap block (cf_alloc.c, cf_site_register): the objects forgotten are
 * counted as reused (cf_st_reused). */
void cf_forget_reused(uintptr_t base, uintptr_t len, uint64_t types)
{
    cf_forget_stale(base, len, types, 0, 1);
}

/* The same for a C++ new-expression's block (cf_alloc.c), seen after its constructors ran:
 * only objects of the types in `types` (the site's, registered again next) are stale;
 * others inside it were registered by its constructors (a base class's object). */
void cf_forget_own_types(uintptr_t base, uintptr_t len, uint64_t types) CF_HIDDEN;
void cf_forget_own_types(uintptr_t base, uintptr_t len, uint64_t types)
{
    cf_forget_stale(base, len, types, 1, 0); /* only its own types: none would count as reused */
}

int cf_is_registered(uintptr_t base)
{
    if (base - RD(cf_lo) >= RD(cf_span))
        return 0;
    cf_obj o;
    unsigned long s;
    int used;
    return cf_lookup(base, &o, &s, &used) && o.base == base;
}

int cf_forget(uintptr_t base, int type)
{
    if (!cf_is_registered(base))
        return 0;
    pthread_mutex_lock(&cf_reg_mu);
    cf_seq_write_begin();
    int n = cf_remove_locked(base, type);
    if (type < 0) /* every type: a base class's object shares its derived object's base */
        for (int more = n; more; n += more)
            more = cf_remove_locked(base, type);
    cf_seq_write_end();
    pthread_mutex_unlock(&cf_reg_mu);
    return n;
}

/* ------------------------------------------------------------------ threads */

static void cf_publish(cf_thread *t);
static pthread_key_t cf_thread_key;
static int cf_thread_key_ok;
static CF_TLS uintptr_t cf_stack_lo, cf_stack_hi;
static CF_TLS int cf_stack_known;

enum { CF_RMAP = 0x8000 };

/* One mapping per thread: roles, frames, the renumbering map, the alignment counters,
 * the scratch sequence and the per-type buffers (2 * max_accesses quads each; only the pages used are touched). */
static size_t cf_thread_bytes(void)
{
    return (size_t)2 * cf_max_objects * sizeof(cf_role) + CF_MAX_FRAMES * sizeof(cf_frame) +
           CF_RMAP * sizeof(uint16_t) + CF_NEGC * sizeof(cf_negc) + CF_CUT0 * sizeof(cf_cut0) +
           CF_MAX_TYPES * CF_ALIGN_LINE * sizeof(uint32_t) +
           (size_t)cf_max_accesses * sizeof(uint64_t) +
           (size_t)CF_MAX_TYPES * 2 * cf_max_accesses * sizeof(uint64_t) + 16;
}

/* The type's buffer. */
static inline uint64_t *cf_slice(const cf_thread *t, uint32_t type)
{
    return t->buf + (size_t)type * 2 * cf_max_accesses;
}

static void cf_sum_release_all(cf_thread *t);

static void cf_thread_release(void *arg)
{
    (void)arg;
    cf_thread *t = &cf_self;
    cf_publish(t);
    if (t->ready) {
        t->active = 0;
        t->ready = 0;
        t->rearmed = 0;
        cf_sum_release_all(t);
        munmap(t->roles, cf_thread_bytes());
        if (t->cnt)
            munmap(t->cnt, (size_t)CF_CNT_MAX * 10 * sizeof(uint64_t));
        t->cnt = NULL;
        t->cnt_type = -1;
        t->fcnt = NULL;
        t->roles = NULL;
        t->frames = NULL;
        t->align = NULL;
        t->nest = 0;
        t->cut_n = 0;
        t->cut_next = 0;
        t->nroles = 0;
        t->rolesmax = 0;
        t->buf = NULL;
    }
}

static int cf_thread_setup(cf_thread *t)
{
    char *mem = cf_mmap(cf_thread_bytes());
    if (!mem)
        return 0;
    t->roles = (cf_role *)mem;
    t->rolesmax = 0;
    mem += (size_t)2 * cf_max_objects * sizeof(cf_role); /* see cf_resolve */
    mem += (16 - (uintptr_t)mem % 16) % 16;
    t->frames = (cf_frame *)mem;
    mem += CF_MAX_FRAMES * sizeof(cf_frame);
    t->rmap = (uint16_t *)mem;
    mem += CF_RMAP * sizeof(uint16_t);
    t->negc = (cf_negc *)mem; /* zero: gran 0 matches no granule */
    mem += CF_NEGC * sizeof(cf_negc);
    t->cut0 = (cf_cut0 *)mem; /* zero: size 0 holds nothing */
    mem += CF_CUT0 * sizeof(cf_cut0);
    t->cut0_gen = 1;
    t->cnt_type = -1;
    t->fcnt = NULL;
    t->align = (uint32_t *)mem;
    mem += CF_MAX_TYPES * CF_ALIGN_LINE * sizeof(uint32_t);
    t->scratch = (uint64_t *)mem;
    mem += (size_t)cf_max_accesses * sizeof(uint64_t);
    t->buf = (uint64_t *)mem;
    t->nest = 0;
    t->cut_n = 0;
    t->cut_next = 0;
    t->ready = 1;
    if (cf_thread_key_ok)
        pthread_setspecific(cf_thread_key, t);
    return 1;
}

int cf_on_own_stack(uintptr_t a)
{
    if (!cf_stack_known) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        cf_stack_known = 1;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
                cf_stack_lo = (uintptr_t)addr;
                cf_stack_hi = (uintptr_t)addr + size;
            }
            pthread_attr_destroy(&attr);
        }
    }
    return a >= cf_stack_lo && a < cf_stack_hi;
}

/* ------------------------------------------------------------------ recording */

static inline void cf_touch(cf_thread *t, uint32_t type)
{
    uint64_t bit = 1ull << type;
    if (!(t->touched & bit)) {
        t->touched |= bit;
        t->len[type] = 0;
        t->nrole[type] = 0;
        t->outside[type] = 0;
        t->cap[type] = cf_max_accesses;
    }
}

/* A type's state when an invocation starts with n roles of it (armed, or the first one
 * touched): the only type touched, nothing outside its objects, not long. */
static inline __attribute__((always_inline)) void cf_type_start(cf_thread *t, uint32_t type,
                                                                uint32_t n)
{
    t->touched = 1ull << type;
    t->nrole[type] = n;
    t->outside[type] = 0;
    t->cap[type] = cf_max_accesses;
}

/* Invocations frames[0 .. n) lost an object of `type` (beyond max_objects): the max_objects
 * guard counts each of them once per type (the outermost one at its end through
 * outside[], the nested ones in cf_frame_end). */
static void cf_lost(cf_thread *t, uint32_t type, uint32_t n)
{
    t->outside[type] |= CF_OUT_OBJCUT;
    for (uint32_t k = 1; k < n; k++)
        t->frames[k].objcut |= 1ull << type;
}

/* ------------------------------------------------------------------ objects left out
 *
 * An object the max_objects guard left out for every active invocation (cf_resolve, not
 * `own`) stays out for as long as the nesting level and the registry version are
 * unchanged: the invocation gains no roles at that level any more (nroles only grows
 * there, and is at its limit), and the guard's marks (outside[], frames[].objcut, the
 * touched bit) are already set.  Such an object goes in this cache, so that further
 * accesses to it are dropped by cf_access_inside without a lookup, with the same effect.
 * Emptied when the nesting level changes (cf_nest_enter, cf_frame_end), when the
 * outermost invocation ends (cf_flush) and when a role's extent is confirmed again
 * (cf_resolve; registered objects that overlap); entries of another registry version
 * never match.  The objects left out at the outermost level are also filed by granule in
 * cf_thread.cut0, which only the last two events empty: the outermost invocation gains no
 * roles below max_objects once it has them all, whatever its nested invocations do, so
 * an interpreter's main loop that touches many objects keeps dropping their accesses
 * without a lookup between the nested invocations it makes. */
static inline void cf_cut_clear(cf_thread *t)
{
    t->cut_n = 0;
    t->cut_next = 0;
}

/* Also the outermost level's (cf_thread.cut0): its invocation ended, or a role's extent
 * was confirmed again. */
static inline void cf_cut_clear_all(cf_thread *t)
{
    cf_cut_clear(t);
    t->cut0_gen++;
}

/* a: the address whose access left the object out. */
static void cf_cut_put(cf_thread *t, uintptr_t base, uintptr_t size, unsigned long seq,
                       uintptr_t a)
{
    if (!t->nest && t->cut0) {
        cf_cut0 *e = &t->cut0[(a >> CF_GRAN_SHIFT) % CF_CUT0];
        e->base = base;
        e->size = size;
        e->seq = seq;
        e->gen = t->cut0_gen;
    }
    uint32_t i = t->cut_next++ % CF_CUT_CACHE;
    t->cut_base[i] = base;
    t->cut_size[i] = size;
    t->cut_seq[i] = seq;
    if (t->cut_n < CF_CUT_CACHE)
        t->cut_n++;
}

/* The invocation's role of the object element [ebase, ebase + esize) of `type`, confirmed
 * at registry version `seq` (with CF_SEQ_NESTED for an object nested in another), made
 * the fast role when `fast`; a new role when it has none (NULL: left out by max_objects;
 * `a`, the address accessed, then files it in the outermost level's cut cache). */
static inline __attribute__((always_inline)) cf_role *cf_role_of(
    cf_thread *t, uintptr_t ebase, uintptr_t esize, uint32_t type, unsigned long seq, int fast,
    uintptr_t a)
{
    for (uint32_t i = 0; i < t->nroles; i++) {
        cf_role *r = &t->roles[i];
        if (r->base == ebase && r->type == type) {
            if (r->seq != seq || r->size != esize)
                cf_cut_clear_all(t);
            r->size = esize;
            r->seq = seq;
            if (fast)
                cf_set_last(t, i);
            return r;
        }
    }
    if (t->nroles >= cf_max_objects || t->nrole[type] >= 0x7fff) {
        /* Too many objects.  Inside a nested invocation (up to max_objects more roles in
         * all) it is a role of the innermost one only: recorded for it, lost for the
         * enclosing ones, released when it ends (cf_release_own); else lost for all. */
        int own = t->nest && t->nroles < 2 * cf_max_objects && t->nrole[type] < 0x7fff;
        cf_lost(t, type, own ? t->nest : t->nest + 1);
        if (!own) {
            cf_cut_put(t, ebase, esize, seq, a);
            return NULL;
        }
    }
    cf_role *r = &t->roles[t->nroles];
    r->base = ebase;
    r->size = esize;
    r->seq = seq;
    r->type = type;
    r->role = t->nrole[type]++;
    r->tag = (uint64_t)(r->role & 0x7fffu) << 48;
    r->slice = cf_slice(t, type);
    if (fast)
        cf_set_last(t, t->nroles);
    t->nroles++;
    if (t->nroles > t->rolesmax)
        t->rolesmax = t->nroles;
    return r;
}

/* The object elements holding the addresses [lo, hi) among objects nested in each other
 * (CF_OBJ_NESTED): a derived object and its base class's object, a record and its traced
 * member; elements of one type at one base once.  Each is a cf_obj with base and span of
 * the element alone.  Valid at registry version `seq`. */
typedef struct cf_nest_memo {
    unsigned long seq;
    uintptr_t lo, hi;
    int n;
    cf_obj e[CF_NEST_MAX];
} cf_nest_memo;

/* Per thread, the last few looked up (an invocation works on a few nested objects; so do
 * the next ones): their holders without a lookup of the registry.  cf_nmemo_on: some
 * entry was ever filled (cf_resolve checks them only then). */
enum { CF_NEST_MEMO = 4 };
static CF_TLS cf_nest_memo cf_nmemo[CF_NEST_MEMO];
static CF_TLS uint32_t cf_nmemo_next, cf_nmemo_on;

static inline const cf_nest_memo *cf_nest_memo_find(uintptr_t a, unsigned long now)
{
    for (uint32_t i = 0; i < CF_NEST_MEMO; i++)
        if (a - cf_nmemo[i].lo < cf_nmemo[i].hi - cf_nmemo[i].lo && cf_nmemo[i].seq == now)
            return &cf_nmemo[i];
    return NULL;
}

/* The holders of `a` at registry version `now` (or a later one when the registry changed
 * since: the entry's seq says which), from the memo or a lookup that fills an entry. */
static const cf_nest_memo *cf_nested_elems(uintptr_t a, unsigned long now)
{
    const cf_nest_memo *hit = cf_nest_memo_find(a, now);
    if (hit)
        return hit;
    cf_obj o[CF_NEST_MAX];
    cf_nest_memo *m = &cf_nmemo[cf_nmemo_next++ % CF_NEST_MEMO];
    uintptr_t lo, hi;
    int n = cf_lookup_all(a, o, CF_NEST_MAX, &m->seq, &lo, &hi);
    m->n = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t idx = o[i].stride == o[i].span ? 0 : (a - o[i].base) / o[i].stride;
        uintptr_t ebase = o[i].base + idx * o[i].stride, eend = ebase + o[i].elem;
        if (a >= eend) { /* in the padding of a strided array: between elements */
            lo = eend > lo ? eend : lo;
            hi = ebase + o[i].stride < hi ? ebase + o[i].stride : hi;
        } else {
            lo = ebase > lo ? ebase : lo;
            hi = eend < hi ? eend : hi;
        }
        int dup = o[i].type >= CF_MAX_TYPES;
        for (int k = 0; k < m->n; k++)
            dup |= m->e[k].base == ebase && m->e[k].type == o[i].type;
        if (dup)
            continue;
        m->e[m->n] = o[i];
        m->e[m->n].base = ebase;
        m->e[m->n].span = o[i].elem;
        m->n++;
    }
    /* all holders found (at most CF_NEST_MAX): the same ones for all of [lo, hi); none
     * found says where no object is, which a registration may change: not kept */
    m->lo = lo;
    m->hi = n < CF_NEST_MAX && m->n ? hi : lo;
    cf_nmemo_on = 1;
    return m;
}

/* What cf_resolve returns for an object nested in another (CF_OBJ_NESTED): the caller
 * records the access for all of them (cf_record_nested). */
static cf_role cf_nested_role;

/* The role of the object holding `a`, found through the objects resolved last or a
 * lookup; NULL when none holds it, &cf_nested_role when the one found is nested.  `now`
 * is the kill version (cf_killseq) the caller read. */
static cf_role *cf_resolve(cf_thread *t, uintptr_t a, unsigned long now)
{
    uintptr_t gran = a >> CF_GRAN_SHIFT;
    uint32_t type;
    uintptr_t ebase, esize;
    unsigned long seq, rseq;
    const cf_role *hit = &t->objcache[t->objcache_last % CF_OBJ_CACHE];
    /* The object resolved last (an entry function working on one object again). */
    if (!(hit->size && a - hit->base < hit->size && hit->seq == now)) {
        hit = NULL;
        unsigned long rnow = __atomic_load_n(&cf_regseq, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < CF_NEG_CACHE; i++)
            if (t->neg_gran[i] == gran + 1 && t->neg_seq[i] == rnow)
                return NULL;
        for (uint32_t i = 0; i < CF_OBJ_CACHE; i++) {
            const cf_role *c = &t->objcache[i];
            if (c->size && a - c->base < c->size && c->seq == now) {
                hit = c;
                t->objcache_last = i;
                break;
            }
        }
    }
    if (hit) {
        type = hit->type;
        ebase = hit->base;
        esize = hit->size;
        seq = hit->seq;
        cf_touch(t, type);
    } else {
        cf_obj o;
        int used;
        if (CF_UNLIKELY(cf_nmemo_on) && cf_nest_memo_find(a, now))
            return &cf_nested_role;
        uintptr_t gap[2];
        if (!cf_lookup_gap(a, &o, &seq, &used, gap, &rseq)) {
            if (gap[1] > gap[0]) {
                cf_negc *e = &t->negc[gran % CF_NEGC];
                e->gran = gran + 1;
                e->seq = rseq;
                e->lo = (uint32_t)(gap[0] - (gran << CF_GRAN_SHIFT));
                e->hi = (uint32_t)(gap[1] - (gran << CF_GRAN_SHIFT));
            }
            if (!used) {
                /* Most recent first: the per-access path checks the first two. */
                for (uint32_t k = CF_NEG_CACHE - 1; k > 0; k--) {
                    t->neg_gran[k] = t->neg_gran[k - 1];
                    t->neg_seq[k] = t->neg_seq[k - 1];
                }
                t->neg_gran[0] = gran + 1;
                t->neg_seq[0] = rseq;
            }
            return NULL;
        }
        if (o.type >= CF_MAX_TYPES)
            return NULL;
        if (o.flags & CF_OBJ_NESTED)
            return &cf_nested_role;
        type = o.type;
        cf_touch(t, type);
        uintptr_t rel = a - o.base;
        uintptr_t idx = o.stride == o.span ? 0 : rel / o.stride;
        ebase = o.base + idx * o.stride;
        esize = o.elem;
        if (a - ebase >= o.elem) {
            t->outside[type]++; /* padding of a strided array, e.g. a stack behind a TCB */
            return NULL;
        }
        t->objcache_last = t->objcache_next % CF_OBJ_CACHE;
        cf_role *c = &t->objcache[t->objcache_next++ % CF_OBJ_CACHE];
        c->base = ebase;
        c->size = esize;
        c->seq = seq;
        c->type = type;
    }
    return cf_role_of(t, ebase, esize, type, seq, 1, a);
}

/* An address in none of this invocation's roles: the first few objects that earlier
 * invocations gave roles (roles[nroles .. rolesmax), kept until overwritten), if one holds
 * it and was confirmed at the current registry version `now`, takes the next role of its
 * type without a lookup (sender and receiver taking turns at being first).  It is swapped
 * into roles[nroles], so the entry it displaces stays among the earlier ones.  NULL: none
 * (the caller resolves the address). */
static cf_role *cf_reuse_role(cf_thread *t, uintptr_t a, unsigned long now)
{
    uint32_t n = t->nroles;
    uint32_t end = t->rolesmax < n + CF_INLINE_ROLES ? t->rolesmax : n + CF_INLINE_ROLES;
    if (end > cf_max_objects) /* beyond: roles of nested invocations only (cf_resolve) */
        end = cf_max_objects;
    for (uint32_t j = n; j < end; j++) {
        cf_role *c = &t->roles[j];
        if (a - c->base >= c->size || c->seq != now)
            continue;
        uint32_t type = c->type;
        cf_touch(t, type);
        if (t->nrole[type] >= 0x7fff) { /* n < max_objects */
            t->outside[type] |= CF_OUT_OBJCUT;
            return NULL;
        }
        if (j != n) {
            cf_role tmp = t->roles[n];
            t->roles[n] = *c;
            *c = tmp;
        }
        cf_role *r = &t->roles[n];
        r->role = t->nrole[type]++;
        r->tag = (uint64_t)(r->role & 0x7fffu) << 48;
        r->slice = cf_slice(t, type);
        cf_set_last(t, t->nroles++);
        return r;
    }
    return NULL;
}

enum { CF_NOARM_AFTER_MISS = 16 };

/* Make roles[0] the fast role and roles[1] (when nroles >= 2, of the same type and
 * registry version) the second one, with their own tags; the caller detaches/attaches. */
static inline void cf_fast_pair(cf_thread *t)
{
    t->fsize = 0;
    if (t->nroles >= 2)
        cf_set_last(t, 1);
    cf_set_last(t, 0);
}

/* roles[0] and roles[1] (of one type) trade places, and so their numbers 0 and 1. */
static inline void cf_swap_roles01(cf_thread *t)
{
    cf_role tmp = t->roles[0];
    t->roles[0] = t->roles[1];
    t->roles[1] = tmp;
    t->roles[0].role = 0;
    t->roles[0].tag = 0;
    t->roles[1].role = 1;
    t->roles[1].tag = (uint64_t)1 << 48;
}

/* roles[0] and roles[1] were armed together (armed == 2: tags 0 and 1, the fast and
 * second fast role) and the fast roles are detached (len[] is current): number them by
 * first touch, as the slow path would have.  Until this runs only those two roles
 * append, so the sequence holds roles 0 and 1 only.  If it begins with role 1, the two
 * trade numbers in every quad (bit 48) and in roles[]; a role never touched is dropped
 * (it stays among the earlier invocations' objects).  Returns 0 when neither was
 * touched (the caller disarms as for one armed role). */
static __attribute__((noinline)) int cf_settle_armed(cf_thread *t)
{
    uint32_t type = t->roles[0].type;
    uint32_t len = t->len[type];
    uint64_t *q = t->roles[0].slice;
    t->armed = 0;
    if (len == 0)
        return 0;
    const uint64_t role_bits = (uint64_t)0x7fff << 48;
    uint64_t first = q[0] & role_bits;
    uint32_t i = 1;
    while (i < len && (q[i] & role_bits) == first)
        i++;
    t->alt = (first != 0) ^ t->armswap;
    if (first) {
        for (uint32_t k = 0; k < len; k++)
            q[k] ^= (uint64_t)1 << 48;
        cf_swap_roles01(t);
    }
    if (i == len) { /* one of the two never touched */
        t->nroles = 1;
        t->nrole[type] = 1;
    }
    cf_fast_pair(t);
    return 1;
}

/* Start of a slow path that reads or appends through len[]: detach the fast role, and
 * if the previous invocation's role 0 was armed and nothing has touched it yet, disarm
 * it (this access may be to another object of its type, which must become role 0; and
 * an untouched armed role must not count towards max_objects).  Two armed roles are
 * first numbered by first touch (cf_settle_armed), or disarmed if neither was touched. */
static inline void cf_slow_begin(cf_thread *t)
{
    cf_fast_detach(t);
    if (t->armed) {
        int touched = t->armed == 2 ? cf_settle_armed(t) : t->len[t->roles[0].type] != 0;
        t->armed = 0;
        if (!touched) {
            t->nroles = 0;
            t->touched = 0;
            t->fsize = 0;
            t->fsize2 = 0;
            /* Invocations that start on different objects (sender and receiver taking
             * turns): arming costs more than it saves; try again after a while. */
            t->noarm = CF_NOARM_AFTER_MISS;
        }
    }
}

static void cf_make_room(cf_thread *t, uint32_t type);

/* cf_append for the slow paths: a full buffer is grown or compacted first. */
static inline void cf_append_slow(cf_thread *t, const cf_role *r, uintptr_t a, uint64_t sm)
{
    if (CF_UNLIKELY(!cf_append(t, r, a, sm))) {
        cf_make_room(t, r->type);
        cf_append(t, r, a, sm);
    }
}

/* An access at `a` inside objects nested in each other: one quad for every object element
 * that holds it (cf_nested_elems), each its own role of its own type.  Their roles carry
 * CF_SEQ_NESTED and are never the fast role: the next access to them comes here again. */
static void cf_record_nested(cf_thread *t, uintptr_t a, uint64_t sm, unsigned long now)
{
    const cf_nest_memo *m = cf_nested_elems(a, now);
    for (int i = 0; i < m->n; i++) {
        const cf_obj *e = &m->e[i];
        cf_touch(t, e->type);
        if (a - e->base >= e->span) {
            t->outside[e->type]++; /* padding of a strided array */
            continue;
        }
        cf_role *r = cf_role_of(t, e->base, e->span, e->type, m->seq | CF_SEQ_NESTED, 0, a);
        if (r)
            cf_append_slow(t, r, a, sm);
    }
}

static void cf_count_first(cf_thread *t, uintptr_t a, uint64_t sm);

void cf_record_slow(uintptr_t a, uint64_t sm)
{
    cf_thread *t = &cf_self;
    unsigned long seq = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
    if (CF_UNLIKELY(t->fcnt) && a - t->fbase < t->fsize && t->fseq == seq &&
        cf_cnt_size((uint32_t)(sm >> 32) & 0xffff)) {
        cf_count_first(t, a, sm); /* counting mode: a counter at 0 */
        return;
    }
    /* (Its callers have checked the gaps and the objects left out: cf_access_inside.) */
    t->active = 0; /* a signal handler arriving now is not recorded into a half-written entry */
    cf_slow_begin(t);
    cf_role *r = NULL;
    if (t->nroles == 0) {
        /* The first object of the invocation.  roles[0] still holds the previous
         * invocation's first object, which was role 0 of its type (tag 0, the type's
         * slice): if the address falls in it and the registry has not changed since it
         * was confirmed, it is role 0 again without a lookup (cf_enter normally arms it,
         * so this is reached when the registry changed in between or it was disarmed). */
        r = &t->roles[0];
        if (CF_LIKELY(a - r->base < r->size && r->seq == seq && !t->touched)) {
            uint32_t type = r->type;
            cf_type_start(t, type, 1);
            t->nroles = 1;
            cf_set_last(t, 0);
            /* The type's first access: len 0 < cap (max_accesses >= 1), role 0, tag 0. */
            r->slice[0] = (uint64_t)(uint32_t)(a - r->base) | sm;
            t->len[type] = 1;
            cf_fast_attach(t);
            t->active = 1;
            return;
        }
        r = NULL;
    }
    int nested = 0;
    for (uint32_t i = 0; i < t->nroles; i++) {
        cf_role *c = &t->roles[i];
        if (a - c->base < c->size) {
            if (c->seq == seq) {
                r = c;
                cf_set_last(t, i);
            }
            nested = c->seq == (seq | CF_SEQ_NESTED);
            break;
        }
    }
    if (CF_UNLIKELY(nested))
        r = &cf_nested_role;
    if (!r)
        r = cf_reuse_role(t, a, seq);
    if (!r)
        r = cf_resolve(t, a, seq);
    if (CF_UNLIKELY(r == &cf_nested_role))
        cf_record_nested(t, a, sm, seq);
    else if (r)
        cf_append_slow(t, r, a, sm);
    cf_fast_attach(t);
    t->active = 1;
}

/* The part from `start` of a copy or fill ending at `end` over objects nested in each
 * other: for every object element holding `start` (cf_nested_elems), one access of its
 * overlap with the range; returns where the longest of them ends.  (An object nested
 * further on inside them is not seen, as before.) */
static uintptr_t cf_record_nested_range(cf_thread *t, uintptr_t start, uintptr_t end,
                                        unsigned mode)
{
    uintptr_t stop = start + 1;
    const cf_nest_memo *m = cf_nested_elems(start, RD(cf_killseq));
    for (int i = 0; i < m->n; i++) {
        const cf_obj *e = &m->e[i];
        if (start - e->base >= e->span)
            continue; /* padding of a strided array */
        uintptr_t eend = e->base + e->span, last = eend < end ? eend : end;
        cf_touch(t, e->type);
        cf_role *r = cf_role_of(t, e->base, e->span, e->type, m->seq | CF_SEQ_NESTED, 0,
                                start);
        if (r) {
            uintptr_t len = last - start;
            cf_append_slow(t, r, start, CF_SM(len > 0xffff ? 0xffff : len, mode));
        }
        if (last > stop)
            stop = last;
    }
    return stop;
}

/* A copy or fill of n bytes at a (memcpy/memmove/memset in instrumented code): one
 * access per object element it overlaps, with the offset and size of the overlap
 * (sizes above 65535 are cut to 65535), in address order.  Bytes between objects and
 * the padding of strided arrays are skipped without being counted as outside; gaps are
 * walked one 256-byte granule at a time, and a range needing more than 2^20 steps is
 * recorded only up to there (a huge fill inside an invocation). */
void cf_record_range(uintptr_t a, uintptr_t n, unsigned mode)
{
    cf_thread *t = &cf_self;
    if (!t->active || !n)
        return;
    uintptr_t lo = RD(cf_lo), span = RD(cf_span);
    uintptr_t end = a + n < a ? UINTPTR_MAX : a + n;
    uintptr_t hi = lo + span;
    if (!span || a >= hi || end <= lo) /* overlaps no registered object */
        return;
    if (a < lo)
        a = lo;
    if (end > hi)
        end = hi;
    t->active = 0;
    cf_slow_begin(t);
    for (unsigned steps = 0; a < end && steps < (1u << 20); steps++) {
        cf_obj o;
        unsigned long seq;
        if (!cf_next_object(a, &o, &seq)) {
            a = ((a >> CF_GRAN_SHIFT) + 1) << CF_GRAN_SHIFT; /* nothing in this granule */
            continue;
        }
        uintptr_t start = a > o.base ? a : o.base;
        if (start >= end)
            break;
        uintptr_t idx = o.stride == o.span ? 0 : (start - o.base) / o.stride;
        uintptr_t ebase = o.base + idx * o.stride;
        if (start - ebase >= o.elem) { /* padding of a strided array */
            a = ebase + o.stride;
            continue;
        }
        uintptr_t eend = ebase + o.elem;
        uintptr_t stop = eend < end ? eend : end;
        cf_role *r = cf_resolve(t, start, seq);
        if (r == &cf_nested_role) {
            stop = cf_record_nested_range(t, start, end, mode);
        } else if (r) {
            uintptr_t len = stop - start;
            cf_append_slow(t, r, start, CF_SM(len > 0xffff ? 0xffff : len, mode));
        }
        a = stop;
    }
    cf_fast_attach(t);
    t->active = 1;
}

/* ------------------------------------------------------------------ sequences */

typedef struct cf_seq {
    struct cf_seq *all;
    uint64_t hash;
    uint64_t count;
    uint64_t key; /* cf_seq_key(entry, len) */
    uint32_t type;
    uint32_t len;
    uint64_t q[];
} cf_seq;

/* What a sequence is looked up by besides its type and quads: its kind of operation
 * (entry index, -1 for cachefit_begin) and its length, in one word. */
static inline uint64_t cf_seq_key(int entry, uint32_t len)
{
    return (uint64_t)(uint32_t)entry << 32 | len;
}

typedef struct cf_stab {
    size_t mask;
    size_t used;
    cf_seq *s[];
} cf_stab;

static pthread_mutex_t cf_seq_mu = PTHREAD_MUTEX_INITIALIZER;
static cf_stab *cf_seqtab;
static cf_seq *cf_seq_all;
static cf_seq **cf_seq_tail = &cf_seq_all;
static uint64_t cf_nseqs;
static uint64_t cf_nsums; /* entries of the summaries' table (below) */
static void cf_overflow_add_locked(uint32_t type, int entry, const uint64_t *q,
                                   const uint64_t *hits, uint32_t n);
static char *cf_arena;
static size_t cf_arena_left;
static uint64_t cf_invocations, cf_recorded_total;
enum { CF_PUBLISH_EVERY = 64 };
static uint64_t cf_st_outside[CF_MAX_TYPES], cf_st_full[CF_MAX_TYPES];
/* Memory guards that fired: invocations with objects beyond max_objects not recorded, and
 * summaries whose distinct accesses reached max_distinct (per type); entry calls nested
 * deeper than CF_MAX_FRAMES invocations. */
static uint64_t cf_st_objects[CF_MAX_TYPES], cf_st_distinct[CF_MAX_TYPES], cf_st_deep;
static uint32_t cf_max_distinct = 65536;
static int cf_count_on = 1; /* counting mode (CACHEFIT_COUNT=0: off) */
static int cf_nest_fast = 1; /* cf_nest_enter1, cf_leave_nested1 (CACHEFIT_NEST_FAST=0: off) */
/* Objects' base addresses modulo CF_ALIGN_LINE, per type: one per invocation (of any
 * kind) and object of the type it touched (raw trace `align` lines). */
static uint64_t cf_st_align[CF_MAX_TYPES][CF_ALIGN_LINE];

static cf_seq *cf_seq_find(const cf_stab *st, uint32_t type, uint64_t hash, uint64_t key,
                           const uint64_t *q)
{
    uint32_t len = (uint32_t)key;
    if (!st)
        return NULL;
    size_t i = (size_t)hash & st->mask;
    for (size_t n = 0; n <= st->mask; n++, i = (i + 1) & st->mask) {
        cf_seq *p = __atomic_load_n(&st->s[i], __ATOMIC_ACQUIRE);
        if (!p)
            return NULL;
        if (p->hash == hash && p->type == type && p->key == key &&
            memcmp(p->q, q, (size_t)len * sizeof *q) == 0)
            return p;
    }
    return NULL;
}

static void *cf_arena_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > cf_arena_left) {
        size_t chunk = size > (1u << 20) ? size : (1u << 20);
        char *p = cf_mmap(chunk);
        if (!p)
            return NULL;
        cf_arena = p;
        cf_arena_left = chunk;
    }
    void *r = cf_arena;
    cf_arena += size;
    cf_arena_left -= size;
    return r;
}

static int cf_seq_publish_locked(cf_seq *p)
{
    cf_stab *st = cf_seqtab;
    if (!st || (st->used + 1) * 2 > st->mask + 1) {
        size_t ncap = st ? (st->mask + 1) * 2 : 1024;
        cf_stab *n = cf_mmap(sizeof(cf_stab) + ncap * sizeof(cf_seq *));
        if (!n)
            return 0;
        n->mask = ncap - 1;
        for (cf_seq *s = cf_seq_all; s; s = s->all) {
            size_t i = (size_t)s->hash & n->mask;
            while (n->s[i])
                i = (i + 1) & n->mask;
            n->s[i] = s;
            n->used++;
        }
        __atomic_store_n(&cf_seqtab, n, __ATOMIC_RELEASE);
        st = n;
    }
    size_t i = (size_t)p->hash & st->mask;
    while (st->s[i])
        i = (i + 1) & st->mask;
    __atomic_store_n(&st->s[i], p, __ATOMIC_RELEASE);
    st->used++;
    return 1;
}

/* Count one occurrence of the sequence; returns its entry (NULL when the table is full). */
static cf_seq *cf_seq_count(uint32_t type, uint64_t hash, uint64_t key, const uint64_t *q)
{
    uint32_t len = (uint32_t)key;
    cf_seq *p = cf_seq_find(__atomic_load_n(&cf_seqtab, __ATOMIC_ACQUIRE), type, hash, key, q);
    if (p) {
        __atomic_fetch_add(&p->count, 1, __ATOMIC_RELAXED);
        return p;
    }
    pthread_mutex_lock(&cf_seq_mu);
    p = cf_seq_find(cf_seqtab, type, hash, key, q);
    if (p) {
        __atomic_fetch_add(&p->count, 1, __ATOMIC_RELAXED);
    } else if (cf_nseqs + cf_nsums >= cf_max_sequences) {
        cf_overflow_add_locked(type, (int)(key >> 32), q, NULL, len);
    } else {
        p = cf_arena_alloc(sizeof(cf_seq) + (size_t)len * sizeof *q);
        if (!p) {
            cf_overflow_add_locked(type, (int)(key >> 32), q, NULL, len);
        } else {
            p->all = NULL;
            p->hash = hash;
            p->count = 1;
            p->key = key;
            p->type = type;
            p->len = len;
            memcpy(p->q, q, (size_t)len * sizeof *q);
            *cf_seq_tail = p;
            cf_seq_tail = &p->all;
            cf_nseqs++;
            if (!cf_seq_publish_locked(p)) {
                cf_st_full[type]++;
                p = NULL;
            }
        }
    }
    pthread_mutex_unlock(&cf_seq_mu);
    return p;
}

/* Hash of a sequence: four independent multiply chains (so the latency is a quarter
 * of a single chain's), combined at the end. */
static uint64_t cf_seq_hash(uint32_t type, const uint64_t *q, uint64_t key)
{
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint32_t len = (uint32_t)key;
    uint64_t h0 = 0xcbf29ce484222325ull ^ type, h1 = k ^ key, h2 = ~k, h3 = 0x100000001b3ull;
    uint32_t i = 0;
    for (; i + 4 <= len; i += 4) {
        h0 = (h0 ^ q[i]) * k;
        h1 = (h1 ^ q[i + 1]) * k;
        h2 = (h2 ^ q[i + 2]) * k;
        h3 = (h3 ^ q[i + 3]) * k;
    }
    for (; i < len; i++)
        h0 = (h0 ^ q[i]) * k;
    uint64_t h = h0 ^ (h1 >> 17 | h1 << 47) ^ (h2 >> 31 | h2 << 33) ^ (h3 >> 47 | h3 << 17);
    h *= k;
    return h ^ (h >> 29);
}

/* Whether the n quads at a and b are the same: the differences or-ed together, no branch
 * per quad and no call (a sequence in its recent slot is nearly always the same, and
 * short: the whole comparison is the common case). */
static inline __attribute__((always_inline)) int cf_quads_equal(const uint64_t *a,
                                                                const uint64_t *b, uint32_t n)
{
    uint64_t d = 0;
    for (uint32_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

/* The thread's recent-sequence slot for a sequence: direct-mapped by its length and
 * last quad (sequences of one entry function often differ only in length). */
static inline uint32_t cf_recent_slot(uint32_t len, const uint64_t *q)
{
    return (uint32_t)(((q[len - 1] ^ len) * 0x9E3779B97F4A7C15ull) >> 61) & (CF_RECENT - 1);
}

/* A sequence not in its recent slot: the other slot of its pair, else count it through
 * the shared table; either way it becomes the slot's entry and the entry it displaces
 * moves to the other slot of the pair (two-way, most recent first).  Out of line, so that
 * the hit path below needs no stack frame. */
static __attribute__((noinline)) cf_seq *cf_seq_count_miss(cf_thread *t, uint32_t type,
                                                            uint64_t key, const uint64_t *q)
{
    uint32_t len = (uint32_t)key;
    uint32_t k = cf_recent_slot(len, q);
    cf_seq **rc = t->recent[type];
    uint64_t *pend = t->rpend[type];
    cf_seq *p = rc[k ^ 1];
    if (p && p->key == key && cf_quads_equal(p->q, q, len)) {
        /* the pair's two entries change places, with their pending counts */
        uint64_t n = pend[k ^ 1] + 1;
        rc[k ^ 1] = rc[k];
        pend[k ^ 1] = pend[k];
        rc[k] = p;
        pend[k] = n;
        return p;
    }
    p = cf_seq_count(type, cf_seq_hash(type, q, key), key, q); /* counted there */
    if (p && p != rc[k]) {
        if (pend[k ^ 1]) /* the entry leaving the pair */
            __atomic_fetch_add(&rc[k ^ 1]->count, pend[k ^ 1], __ATOMIC_RELAXED);
        rc[k ^ 1] = rc[k];
        pend[k ^ 1] = pend[k];
        rc[k] = p;
        pend[k] = 0;
    }
    return p;
}

/* Add the thread's pending counts of its recent sequences to the sequences' counts. */
static void cf_recent_flush(cf_thread *t)
{
    int nt = __atomic_load_n(&cf_ntypes, __ATOMIC_ACQUIRE);
    for (int i = 0; i < nt; i++)
        for (int k = 0; k < CF_RECENT; k++)
            if (t->rpend[i][k]) {
                __atomic_fetch_add(&t->recent[i][k]->count, t->rpend[i][k], __ATOMIC_RELAXED);
                t->rpend[i][k] = 0;
            }
}

/* Count the thread's sequence for `type` (len >= 1) of an invocation of `entry`: first the
 * entry this thread counted last in the sequence's recent slot (compared by kind and
 * length, then contents: no hashing), else through the shared table.  Returns the table's
 * entry (NULL: the table was full, the sequence went into the overflow summary). */
static inline __attribute__((always_inline)) cf_seq *
cf_seq_count_recent(cf_thread *t, uint32_t type, int entry, uint32_t len, const uint64_t *q)
{
    uint64_t key = cf_seq_key(entry, len);
    uint32_t k = cf_recent_slot(len, q);
    cf_seq *c = t->recent[type][k];
    if (CF_LIKELY(c && c->key == key && cf_quads_equal(c->q, q, len))) {
        t->rpend[type][k]++;
        return c;
    }
    return cf_seq_count_miss(t, type, key, q);
}

/* ------------------------------------------------------------------ summaries */

/* The accesses of one invocation to one type folded out of its buffer (the buffer filled
 * up): each distinct quad once, in the order of its first occurrence, with its number of
 * occurrences (hits).  An open-addressing table of (quad, hits) entries (2 * cap of them,
 * an empty one holds CF_SUM_EMPTY, which no access makes: role 0x7fff is never given) and
 * the order of first occurrence as the entries' slots; a folded access that is already in
 * the table (a hot loop's accesses, nearly all of them) costs a hash, one compare and one
 * add.  Grown (a new mapping, at compaction time) when the entries reach `cap`, up to
 * max_distinct entries; an access not seen before beyond that is not kept (`cut`, stat
 * `distinct`).  q and hits are the list in order, written by cf_sum_flat when the summary
 * ends.  Never on the per-access path. */
typedef struct cf_sent {
    uint64_t q;
    uint64_t hits;
} cf_sent;

#define CF_SUM_EMPTY (~(uint64_t)0)

struct cf_sum {
    cf_sum *next;    /* the thread's free list */
    size_t bytes;    /* of the mapping: this header, then the arrays */
    uint32_t n, cap; /* entries, room (a power of two) */
    uint32_t shift;  /* 64 - log2(2 * cap): the slot is the top bits of the hash */
    uint64_t cut;    /* accesses not kept */
    cf_sent *tab;    /* [2 * cap] */
    uint32_t *order; /* [cap]: the slots of the entries, in order of first occurrence */
    uint64_t *q;     /* [cap] (cf_sum_flat) */
    uint64_t *hits;  /* [cap] (cf_sum_flat) */
};

enum { CF_SUM_FIRST = 256 };

static cf_sum *cf_sum_map(uint32_t cap)
{
    size_t bytes = sizeof(cf_sum) + (size_t)cap * 2 * sizeof(cf_sent) +
                   (size_t)cap * 2 * sizeof(uint64_t) + (size_t)cap * sizeof(uint32_t);
    char *m = cf_mmap(bytes);
    if (!m)
        return NULL;
    cf_sum *s = (cf_sum *)m;
    s->bytes = bytes;
    s->cap = cap;
    s->shift = (uint32_t)(63 - __builtin_ctz(cap));
    s->tab = (cf_sent *)(m + (sizeof(cf_sum) + 15) / 16 * 16);
    s->q = (uint64_t *)(s->tab + 2 * (size_t)cap);
    s->hits = s->q + cap;
    s->order = (uint32_t *)(s->hits + cap);
    memset(s->tab, 0xff, (size_t)cap * 2 * sizeof(cf_sent)); /* hits too: rewritten */
    return s;
}

static void cf_sum_clear(cf_sum *s);

/* An empty summary: one the thread used before, or a new mapping. */
static cf_sum *cf_sum_get(cf_thread *t)
{
    cf_sum *s = t->sum_free;
    if (!s)
        return cf_sum_map(CF_SUM_FIRST);
    t->sum_free = s->next;
    cf_sum_clear(s);
    return s;
}

/* Empty s (its room stays). */
static void cf_sum_clear(cf_sum *s)
{
    if (s->n < s->cap / 8) { /* few entries to clear: only their slots */
        for (uint32_t i = 0; i < s->n; i++)
            s->tab[s->order[i]].q = CF_SUM_EMPTY;
    } else {
        memset(s->tab, 0xff, (size_t)s->cap * 2 * sizeof(cf_sent));
    }
    s->n = 0;
    s->cut = 0;
}

static void cf_sum_put(cf_thread *t, cf_sum *s)
{
    s->next = t->sum_free;
    t->sum_free = s;
}

static void cf_sum_release_all(cf_thread *t)
{
    for (uint32_t k = 0; t->frames && k <= t->nest; k++) {
        cf_frame *f = &t->frames[k];
        for (uint64_t m = f->folded; m; m &= m - 1) {
            int type = __builtin_ctzll(m);
            if (f->sum[type])
                cf_sum_put(t, f->sum[type]);
            f->sum[type] = NULL;
        }
        f->folded = 0;
    }
    while (t->sum_free) {
        cf_sum *s = t->sum_free;
        t->sum_free = s->next;
        munmap(s, s->bytes);
    }
}

/* The slot of a quad: the top bits of its product with an odd constant (bit i of the quad
 * reaches bits i .. 63 of the product, so they depend on the role, size and mode too). */
#define CF_SUM_MUL 0x9E3779B97F4A7C15ull
static inline uint32_t cf_sum_hash(uint64_t q, uint32_t shift)
{
    return (uint32_t)((q * CF_SUM_MUL) >> shift);
}

/* Twice the room (NULL: no memory; s stays as it is).  The entries keep their order. */
static cf_sum *cf_sum_grow(cf_sum *s)
{
    cf_sum *g = cf_sum_map(s->cap * 2);
    if (!g)
        return NULL;
    uint32_t mask = g->cap * 2 - 1;
    g->n = s->n;
    g->cut = s->cut;
    for (uint32_t i = 0; i < s->n; i++) {
        const cf_sent *e = &s->tab[s->order[i]];
        uint32_t h = cf_sum_hash(e->q, g->shift);
        while (g->tab[h].q != CF_SUM_EMPTY)
            h = (h + 1) & mask;
        g->tab[h] = *e;
        g->order[i] = h;
    }
    munmap(s, s->bytes);
    return g;
}

/* A quad not in the table at slot h (the empty slot its probe ended at): a new entry with
 * `inc` hits, after growing the table if it is full, or `inc` more accesses cut.  Returns
 * the summary (a new mapping when it grew). */
static __attribute__((noinline)) cf_sum *cf_sum_insert(cf_sum *s, uint64_t x, uint64_t inc,
                                                       uint32_t h)
{
    if (s->n >= cf_max_distinct) {
        s->cut += inc;
        return s;
    }
    if (s->n == s->cap) {
        cf_sum *g = cf_sum_grow(s);
        if (!g) {
            s->cut += inc;
            return s;
        }
        s = g;
        uint32_t mask = s->cap * 2 - 1;
        h = cf_sum_hash(x, s->shift);
        while (s->tab[h].q != CF_SUM_EMPTY)
            h = (h + 1) & mask;
    }
    s->tab[h].q = x;
    s->tab[h].hits = inc;
    s->order[s->n++] = h;
    return s;
}

/* Fold n quads into the summary *sp (made when NULL), each with weight w[i] (w NULL:
 * `each`). */
static void cf_sum_fold_wn(cf_thread *t, cf_sum **sp, const uint64_t *q, const uint64_t *w,
                           uint32_t n, uint64_t each)
{
    cf_sum *s = *sp;
    if (!n)
        return;
    if (!s && !(s = *sp = t ? cf_sum_get(t) : cf_sum_map(CF_SUM_FIRST)))
        return;
    cf_sent *tab = s->tab;
    uint32_t shift = s->shift, mask = s->cap * 2 - 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = q[i];
        uint64_t inc = w ? w[i] : each;
        uint32_t h = cf_sum_hash(x, shift);
        for (;;) {
            uint64_t k = tab[h].q;
            if (CF_LIKELY(k == x)) {
                tab[h].hits += inc;
                break;
            }
            if (k == CF_SUM_EMPTY) {
                s = *sp = cf_sum_insert(s, x, inc, h);
                tab = s->tab;
                shift = s->shift;
                mask = s->cap * 2 - 1;
                break;
            }
            h = (h + 1) & mask;
        }
    }
}

static void cf_sum_fold_w(cf_thread *t, cf_sum **sp, const uint64_t *q, const uint64_t *w,
                          uint32_t n)
{
    cf_sum_fold_wn(t, sp, q, w, n, 1);
}

/* The same with weight 1 each: the fold of a full buffer, the one loop that runs for every
 * access of a long invocation.  The slot is computed as a byte offset into the table (the
 * top bits of the hash, shifted 4 less and masked), so a quad already in its home slot
 * costs a load, a multiply, a shift, a mask, a compare and an add. */
static void cf_sum_fold(cf_thread *t, cf_sum **sp, const uint64_t *q, uint32_t n)
{
    cf_sum *s = *sp;
    if (!n)
        return;
    if (!s && !(s = *sp = cf_sum_get(t)))
        return;
    char *tab = (char *)s->tab;
    uint64_t shift = s->shift - 4, mask = ((uint64_t)s->cap * 2 - 1) * sizeof(cf_sent);
    for (const uint64_t *end = q + n; q < end; q++) {
        uint64_t x = *q;
        uint64_t off = (x * CF_SUM_MUL) >> shift & mask;
        for (;;) {
            cf_sent *e = (cf_sent *)(tab + off);
            if (CF_LIKELY(e->q == x)) {
                e->hits++;
                break;
            }
            if (e->q == CF_SUM_EMPTY) {
                s = *sp = cf_sum_insert(s, x, 1, (uint32_t)(off / sizeof(cf_sent)));
                tab = (char *)s->tab;
                shift = s->shift - 4;
                mask = ((uint64_t)s->cap * 2 - 1) * sizeof(cf_sent);
                break;
            }
            off = (off + sizeof(cf_sent)) & mask;
        }
    }
}

/* ------------------------------------------------------------------ counting mode
 *
 * A long outermost invocation is a summary: each distinct quad with its hits.  Folding a
 * quad into it (cf_sum_fold) costs a hash probe per access, after the quad was stored.  In
 * counting mode (cf_thread.fcnt) the accesses to one role, the counted role (the fast role
 * when the invocation first became a summary with no nested invocation running), are
 * counted in place instead, one counter per offset, size and mode; only the first access
 * to each counter comes here (cf_count_first): the quads appended before it are folded
 * first, then its quad is filed in the summary (with no hits), so the summary's order of
 * first occurrence is the accesses' own.  Nested invocations and the other roles append
 * quads as before.  When the invocation ends, the counters are added to the hits
 * (cf_count_merge).  The summary is the same as without counting mode, quad for quad. */

/* The counters for the fast role, when it may be (or is) the counted role of this
 * outermost invocation (cf_fast_attach: alone, its type already a summary); else NULL. */
uint64_t *cf_count_attach(cf_thread *t)
{
    if (!cf_count_on || RD(cf_share_on) || t->fsize > CF_CNT_MAX)
        return NULL;
    if (t->cnt_type >= 0)
        return (uint32_t)t->cnt_type == t->ftype && t->cnt_tag == t->ftag ? t->cnt : NULL;
    if (!t->cnt && !(t->cnt = cf_mmap((size_t)CF_CNT_MAX * 10 * sizeof(uint64_t))))
        return NULL;
    t->cnt_type = (int)t->ftype;
    t->cnt_tag = t->ftag;
    t->cnt_size = t->fsize;
    return t->cnt;
}

/* Find the quad x in the summary *sp, or file it with no hits: 0 when it cannot be
 * (max_distinct, or no memory). */
static int cf_sum_file(cf_thread *t, cf_sum **sp, uint64_t x)
{
    cf_sum *s = *sp;
    if (!s && !(s = *sp = cf_sum_get(t)))
        return 0;
    uint32_t mask = s->cap * 2 - 1, h = cf_sum_hash(x, s->shift);
    for (;; h = (h + 1) & mask) {
        if (s->tab[h].q == x)
            return 1;
        if (s->tab[h].q == CF_SUM_EMPTY)
            break;
    }
    uint32_t n = s->n;
    s = *sp = cf_sum_insert(s, x, 0, h);
    return s->n > n;
}

/* The first access (counter 0) to the counted role at a, counting (the fast role is
 * attached, a inside it, the registry unchanged). */
static __attribute__((noinline)) void cf_count_first(cf_thread *t, uintptr_t a, uint64_t sm)
{
    uint32_t type = t->ftype;
    t->active = 0;
    cf_fast_detach(t);
    cf_sum **sp = &t->frames[0].sum[type];
    uint32_t len = t->len[type];
    if (len) { /* the outermost invocation's alone (nothing nested): all folded */
        cf_sum_fold(t, sp, cf_slice(t, type), len);
        t->pend_recorded += len;
        t->len[type] = 0;
    }
    uintptr_t off = a - t->fbase;
    if (cf_sum_file(t, sp, (uint64_t)(uint32_t)off | sm | t->ftag)) {
        /* one, counted as minus the count (cf_thread.fcnt) */
        t->fcnt[CF_CNT_INDEX(off, (uint32_t)(sm >> 32) & 0xffff, (uint32_t)(sm >> 63))] =
            (uint64_t)-1;
    } else { /* not kept, as cf_sum_insert would count it */
        if (*sp)
            (*sp)->cut++;
        t->pend_recorded++;
    }
    cf_fast_attach(t);
    t->active = 1;
}

/* The end of the outermost invocation (detached): the counters are added to the
 * summary's hits of the counted role and cleared; counting mode ends. */
static void cf_count_merge(cf_thread *t)
{
    t->fcnt = NULL;
    if (t->cnt_type < 0)
        return;
    cf_sum *s = t->frames[0].sum[t->cnt_type];
    for (uint32_t i = 0; s && i < s->n; i++) {
        cf_sent *e = &s->tab[s->order[i]];
        uint32_t size = (uint32_t)(e->q >> 32) & 0xffff, off = (uint32_t)e->q;
        if ((e->q & ((uint64_t)0x7fff << 48)) != t->cnt_tag || !cf_cnt_size(size) ||
            off >= t->cnt_size)
            continue;
        uint64_t *c = &t->cnt[CF_CNT_INDEX(off, size, (uint32_t)(e->q >> 63))];
        uint64_t n = 0 - *c; /* a counter holds minus its count (cf_thread.fcnt) */
        e->hits += n;
        t->pend_recorded += n;
        *c = 0;
    }
    t->cnt_type = -1;
}

/* The summary's list in order of first occurrence into q and hits. */
static void cf_sum_flat(cf_sum *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        const cf_sent *e = &s->tab[s->order[i]];
        s->q[i] = e->q;
        s->hits[i] = e->hits;
    }
}

uint32_t cf_sum_len(const cf_sum *s)
{
    return s->n;
}

uint64_t cf_sum_quad(const cf_sum *s, uint32_t i)
{
    return s->tab[s->order[i]].q;
}

/* When the table of sequences and summaries is full (max_sequences), an invocation whose
 * sequence or summary is not in it is still kept: folded, under cf_seq_mu, into one
 * summary per type and kind (first-occurrence order across those invocations, hits
 * summed), written as a `sum` line counting them; stat `full` counts them too. */
static cf_sum *cf_overflow[CF_MAX_TYPES][CF_MAX_ENTRIES + 1];
static uint64_t cf_overflow_n[CF_MAX_TYPES][CF_MAX_ENTRIES + 1];

static void cf_overflow_add_locked(uint32_t type, int entry, const uint64_t *q,
                                   const uint64_t *hits, uint32_t n)
{
    cf_st_full[type]++;
    if (entry < -1 || entry >= CF_MAX_ENTRIES)
        return;
    cf_sum **sp = &cf_overflow[type][entry + 1];
    uint64_t cut = *sp ? (*sp)->cut : 0;
    cf_sum_fold_w(NULL, sp, q, hits, n);
    if (*sp && (*sp)->cut != cut)
        cf_st_distinct[type]++;
    cf_overflow_n[type][entry + 1]++;
}

/* Count the object of role `role` of `type` (a role of the active outermost invocation)
 * in the thread's alignment counters. */
static inline __attribute__((always_inline)) void cf_align_role(cf_thread *t, uint32_t type,
                                                                uint32_t role)
{
    for (uint32_t i = 0; i < t->nroles; i++) {
        const cf_role *r = &t->roles[i];
        if (r->role == role && r->type == type) {
            t->align[type * CF_ALIGN_LINE + (r->base & (CF_ALIGN_LINE - 1))]++;
            return;
        }
    }
}

/* Count every object of the ending outermost invocation (roles[0 .. nroles), each touched;
 * the caller has settled or dropped armed roles never touched). */
static inline void cf_align_roles(cf_thread *t)
{
    const cf_role *r = t->roles, *end = r + t->nroles; /* locals: the counters are uint32_t */
    uint32_t *align = t->align;
    for (; r < end; r++)
        align[r->type * CF_ALIGN_LINE + (r->base & (CF_ALIGN_LINE - 1))]++;
}

/* The roles of n quads of `type` numbered by first touch among them (role bits 48..62),
 * into out (which may be q); each distinct role's object is counted in the alignment
 * counters (the quads are a nested invocation's). */
static void cf_renumber(cf_thread *t, uint32_t type, const uint64_t *q, uint32_t n,
                        uint64_t *out)
{
    const uint64_t role_bits = (uint64_t)0x7fff << 48;
    uint16_t *map = t->rmap;
    uint16_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)(q[i] >> 48) & 0x7fff;
        if (!map[r]) {
            map[r] = ++next;
            cf_align_role(t, type, r);
        }
        out[i] = (q[i] & ~role_bits) | (uint64_t)(map[r] - 1) << 48;
    }
    if (out != q) {
        for (uint32_t i = 0; i < n; i++)
            map[(q[i] >> 48) & 0x7fff] = 0;
    } else { /* renumbered in place: the roles were the invocation's */
        for (uint32_t i = 0; i < t->nroles; i++)
            map[t->roles[i].role & 0x7fff] = 0;
    }
}

/* The n >= 1 quads q with their roles numbered by first touch among them: q itself when
 * they all have role 0 (an inner invocation on the outer one's first object), else a
 * copy in the thread's scratch buffer; one role R throughout is role 0 there. */
static const uint64_t *cf_renumbered(cf_thread *t, uint32_t type, const uint64_t *q,
                                     uint32_t n)
{
    if (t->nrole[type] == 1) { /* one object of the type: every quad has role 0 */
        cf_align_role(t, type, 0);
        return q;
    }
    const uint64_t role_bits = (uint64_t)0x7fff << 48;
    uint64_t r0 = q[0] & role_bits, diff = 0;
    for (uint32_t i = 0; i < n; i++)
        diff |= q[i] ^ r0;
    if (!(diff & role_bits)) {
        cf_align_role(t, type, (uint32_t)(r0 >> 48));
        if (!r0)
            return q;
        for (uint32_t i = 0; i < n; i++)
            t->scratch[i] = q[i] ^ r0;
        return t->scratch;
    }
    cf_renumber(t, type, q, n, t->scratch);
    return t->scratch;
}

/* The process's table of distinct summaries, by type, kind of operation and the ordered
 * list of distinct quads (the hits are summed); under cf_seq_mu (summaries end long
 * invocations: rare), allocated from the sequences' arena. */
typedef struct cf_sumrec {
    struct cf_sumrec *all;
    struct cf_sumrec *chain;
    uint64_t hash;
    uint64_t count;
    uint64_t key; /* cf_seq_key(entry, n) */
    uint32_t type;
    uint32_t n;
    uint64_t *hits;
    uint64_t q[];
} cf_sumrec;

static cf_sumrec **cf_sumtab;
static size_t cf_sumtab_cap;
static cf_sumrec *cf_sum_all;
static cf_sumrec **cf_sum_tail = &cf_sum_all;

static void *cf_arena_alloc(size_t size);

/* The head the records of the summaries' and the classes' chained tables begin with. */
typedef struct cf_chained {
    struct cf_chained *all;
    struct cf_chained *chain;
    uint64_t hash;
} cf_chained;

/* Twice the buckets (`first` the first time) for the records listed from `all`. */
static int cf_chain_grow(cf_chained ***tab, size_t *cap, cf_chained *all, size_t first)
{
    size_t ncap = *cap ? *cap * 2 : first;
    cf_chained **n = cf_mmap(ncap * sizeof *n);
    if (!n)
        return 0;
    for (cf_chained *r = all; r; r = r->all) {
        size_t i = (size_t)r->hash & (ncap - 1);
        r->chain = n[i];
        n[i] = r;
    }
    if (*tab)
        munmap(*tab, *cap * sizeof **tab);
    *tab = n;
    *cap = ncap;
    return 1;
}

static int cf_sumtab_grow_locked(void)
{
    return cf_chain_grow((cf_chained ***)&cf_sumtab, &cf_sumtab_cap, (cf_chained *)cf_sum_all,
                         1024);
}

static uint64_t cf_seq_hash(uint32_t type, const uint64_t *q, uint64_t key);

/* Summaries by field footprint (issue 26; cf_fields.c): the summaries of one type and kind
 * of operation whose per-role sets of touched and of written fields are equal count as one
 * class, which lists the union of their distinct accesses (in order of first occurrence
 * across them) with their hits summed: the layout stage, which reduces a sequence to
 * those sets, sees the same footprints, while the profile grows with the distinct
 * footprints instead of with the distinct summaries (every block zlib's deflate
 * compresses touches other elements of its trees).  Only for types whose field map the
 * blob gives, unless CACHEFIT_EXACT_SUMMARIES=1; written as `sum` lines like the others.
 * Under cf_seq_mu. */
typedef struct cf_sumcls {
    struct cf_sumcls *all;
    struct cf_sumcls *chain;
    uint64_t hash;
    uint64_t count;
    uint32_t type;
    int entry;
    uint32_t ntok;
    uint32_t n, cap;
    uint64_t *tok;  /* [ntok]: the footprint */
    uint64_t *q;    /* [cap]: the union, in order of first occurrence */
    uint64_t *hits; /* [cap] */
} cf_sumcls;

_Static_assert(offsetof(cf_sumrec, chain) == offsetof(cf_chained, chain) &&
                   offsetof(cf_sumrec, hash) == offsetof(cf_chained, hash) &&
                   offsetof(cf_sumcls, chain) == offsetof(cf_chained, chain) &&
                   offsetof(cf_sumcls, hash) == offsetof(cf_chained, hash),
               "the chained tables' records begin with cf_chained's fields");

static int cf_exact_summaries;
static cf_sumcls **cf_clstab;
static size_t cf_clstab_cap;
static cf_sumcls *cf_cls_all;
static cf_sumcls **cf_cls_tail = &cf_cls_all;
static uint64_t cf_ncls;
static uint64_t *cf_cls_tok;   /* footprint scratch */
static uint32_t cf_cls_tokcap;
static cf_sum *cf_cls_merge;   /* union scratch */

static int cf_clstab_grow_locked(void)
{
    return cf_chain_grow((cf_chained ***)&cf_clstab, &cf_clstab_cap, (cf_chained *)cf_cls_all,
                         256);
}

/* Count a summary (n distinct quads q with hits) in its class; 0 when it has none (no
 * field map, no memory, max_sequences reached): the caller counts it as it is. */
static int cf_cls_count_locked(uint32_t type, int entry, uint32_t n, const uint64_t *q,
                               const uint64_t *hits)
{
    if (cf_exact_summaries || !cf_fields_known(type))
        return 0;
    if (n > cf_cls_tokcap) {
        uint32_t want = n < 4096 ? 4096 : n;
        uint64_t *p = cf_mmap((size_t)want * sizeof *p);
        if (!p)
            return 0;
        if (cf_cls_tok)
            munmap(cf_cls_tok, (size_t)cf_cls_tokcap * sizeof *cf_cls_tok);
        cf_cls_tok = p;
        cf_cls_tokcap = want;
    }
    uint32_t ntok = cf_fields_footprint(type, q, n, cf_cls_tok);
    if (!ntok)
        return 0;
    uint64_t hash = cf_seq_hash(type, cf_cls_tok, cf_seq_key(entry, ntok));
    cf_sumcls *c = NULL;
    if (cf_clstab)
        for (c = cf_clstab[(size_t)hash & (cf_clstab_cap - 1)]; c; c = c->chain)
            if (c->hash == hash && c->type == type && c->entry == entry && c->ntok == ntok &&
                memcmp(c->tok, cf_cls_tok, (size_t)ntok * sizeof *c->tok) == 0)
                break;
    if (!c) {
        if (cf_nseqs + cf_nsums >= cf_max_sequences ||
            (cf_ncls >= cf_clstab_cap && !cf_clstab_grow_locked()) ||
            !(c = cf_arena_alloc(sizeof *c + (size_t)ntok * sizeof *c->tok +
                                 (size_t)n * 2 * sizeof *q)))
            return 0;
        c->all = NULL;
        c->hash = hash;
        c->count = 1;
        c->type = type;
        c->entry = entry;
        c->ntok = ntok;
        c->n = c->cap = n;
        c->tok = (uint64_t *)(c + 1);
        c->q = c->tok + ntok;
        c->hits = c->q + n;
        memcpy(c->tok, cf_cls_tok, (size_t)ntok * sizeof *c->tok);
        memcpy(c->q, q, (size_t)n * sizeof *q);
        memcpy(c->hits, hits, (size_t)n * sizeof *hits);
        size_t i = (size_t)hash & (cf_clstab_cap - 1);
        c->chain = cf_clstab[i];
        cf_clstab[i] = c;
        *cf_cls_tail = c;
        cf_cls_tail = &c->all;
        cf_ncls++;
        cf_nsums++;
        return 1;
    }
    /* The union: the class's list, then the summary's accesses not in it. */
    if (cf_cls_merge)
        cf_sum_clear(cf_cls_merge);
    cf_sum_fold_w(NULL, &cf_cls_merge, c->q, c->hits, c->n);
    cf_sum_fold_w(NULL, &cf_cls_merge, q, hits, n);
    cf_sum *m = cf_cls_merge;
    if (!m)
        return 0;
    if (m->cut) /* the union reached max_distinct */
        __atomic_fetch_add(&cf_st_distinct[type], 1, __ATOMIC_RELAXED);
    if (m->n > c->cap) {
        uint32_t cap = m->n * 2;
        uint64_t *nq = cf_arena_alloc((size_t)cap * 2 * sizeof *nq);
        if (!nq)
            return 0; /* the class stays as it was: the caller counts the summary apart */
        c->q = nq;
        c->hits = nq + cap;
        c->cap = cap;
    }
    cf_sum_flat(m);
    c->n = m->n;
    memcpy(c->q, m->q, (size_t)m->n * sizeof *c->q);
    memcpy(c->hits, m->hits, (size_t)m->n * sizeof *c->hits);
    c->count++;
    return 1;
}

/* Count one invocation with this summary (n >= 1 distinct quads q with their hits). */
static void cf_sum_count(uint32_t type, int entry, uint32_t n, const uint64_t *q,
                         const uint64_t *hits)
{
    pthread_mutex_lock(&cf_seq_mu);
    if (cf_cls_count_locked(type, entry, n, q, hits)) {
        pthread_mutex_unlock(&cf_seq_mu);
        return;
    }
    uint64_t key = cf_seq_key(entry, n);
    uint64_t hash = cf_seq_hash(type, q, key);
    cf_sumrec *r = NULL;
    if (cf_sumtab)
        for (r = cf_sumtab[(size_t)hash & (cf_sumtab_cap - 1)]; r; r = r->chain)
            if (r->hash == hash && r->type == type && r->key == key &&
                memcmp(r->q, q, (size_t)n * sizeof *q) == 0)
                break;
    if (!r && cf_nseqs + cf_nsums < cf_max_sequences &&
        (cf_nsums < cf_sumtab_cap || cf_sumtab_grow_locked()) &&
        (r = cf_arena_alloc(sizeof(cf_sumrec) + (size_t)n * 2 * sizeof *q))) {
        r->all = NULL;
        r->hash = hash;
        r->count = 0;
        r->key = key;
        r->type = type;
        r->n = n;
        r->hits = r->q + n;
        memcpy(r->q, q, (size_t)n * sizeof *q);
        memset(r->hits, 0, (size_t)n * sizeof *hits);
        size_t i = (size_t)hash & (cf_sumtab_cap - 1);
        r->chain = cf_sumtab[i];
        cf_sumtab[i] = r;
        *cf_sum_tail = r;
        cf_sum_tail = &r->all;
        cf_nsums++;
    }
    if (r) {
        r->count++;
        for (uint32_t i = 0; i < n; i++)
            r->hits[i] += hits[i];
    } else {
        cf_overflow_add_locked(type, entry, q, hits, n);
    }
    pthread_mutex_unlock(&cf_seq_mu);
}

/* The end of an invocation's summary for `type`: its roles numbered by first touch (the
 * order of the distinct list is the order of first occurrence) unless they already are
 * (the outermost invocation), counted, and the summary kept for reuse. */
static void cf_sum_end(cf_thread *t, cf_sum **sp, uint32_t type, int entry, int renumber)
{
    cf_sum *s = *sp;
    *sp = NULL;
    if (!s)
        return;
    if (s->cut)
        __atomic_fetch_add(&cf_st_distinct[type], 1, __ATOMIC_RELAXED);
    cf_sum_flat(s);
    if (renumber)
        cf_renumber(t, type, s->q, s->n, s->q);
    if (s->n)
        cf_sum_count(type, entry, s->n, s->q, s->hits);
    cf_sum_put(t, s);
}

/* ------------------------------------------------------------------ frames */

/* Where invocation k's accesses to `type` begin in the type's buffer. */
static inline uint32_t cf_frame_start(const cf_thread *t, uint32_t k, uint32_t type)
{
    const cf_frame *f = &t->frames[k];
    return k && (f->started >> type & 1) ? f->start[type] : 0;
}

/* The lowest role number of `type` among roles[from .. nroles) (roles of nested
 * invocations beyond max_objects: each type's are numbered after all others of the type,
 * in the order of the invocations that own them), or UINT32_MAX when none is. */
static uint32_t cf_own_min(const cf_thread *t, uint32_t type, uint32_t from)
{
    uint32_t lo = UINT32_MAX;
    for (uint32_t i = from; i < t->nroles; i++)
        if (t->roles[i].type == type && t->roles[i].role < lo)
            lo = t->roles[i].role;
    return lo;
}

/* Where the roles of invocations nested in frames[k] begin that are beyond max_objects
 * (theirs only, not frames[k]'s). */
static inline uint32_t cf_own_from(const cf_thread *t, uint32_t k)
{
    uint32_t m = t->frames[k + 1].rmark;
    return m > cf_max_objects ? m : cf_max_objects;
}

/* cf_sum_fold of frames[k]'s n quads q of `type`, without those of roles that invocations
 * nested in it own (beyond max_objects: not frames[k]'s objects). */
static void cf_fold_frame(cf_thread *t, uint32_t k, uint32_t type, const uint64_t *q, uint32_t n)
{
    cf_sum **sp = &t->frames[k].sum[type];
    uint32_t lo = k < t->nest && t->nroles > cf_max_objects
                      ? cf_own_min(t, type, cf_own_from(t, k)) : UINT32_MAX;
    if (lo == UINT32_MAX) {
        cf_sum_fold(t, sp, q, n);
        return;
    }
    uint32_t max = cf_max_accesses, o = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (((uint32_t)(q[i] >> 48) & 0x7fff) >= lo)
            continue;
        t->scratch[o++] = q[i];
        if (o == max) {
            cf_sum_fold(t, sp, t->scratch, o);
            o = 0;
        }
    }
    cf_sum_fold(t, sp, t->scratch, o);
}

/* The type's buffer is full (len == cap; the fast role is detached): the first time in an
 * invocation it doubles (2 * max_accesses: an invocation is kept literally up to
 * max_accesses accesses, so no literal one is lost); after that it is compacted.  Every
 * active invocation whose accesses in it may be longer than max_accesses folds them into
 * its summary; the accesses of the outermost one that may still be kept literally (never
 * folded, at most max_accesses so far) stay, moved to the start of the buffer, and are
 * folded by the enclosing ones later.  At least max_accesses quads are freed each time. */
static __attribute__((noinline)) void cf_make_room(cf_thread *t, uint32_t type)
{
    uint32_t max = cf_max_accesses;
    if (t->cap[type] < 2 * max) {
        t->cap[type] = 2 * max;
        t->outside[type] |= CF_OUT_LONG;
        return;
    }
    uint64_t bit = 1ull << type;
    uint64_t *q = cf_slice(t, type);
    uint32_t len = t->len[type], nf = t->nest + 1, m = nf, s[CF_MAX_FRAMES];
    for (uint32_t k = 0; k < nf; k++) {
        s[k] = cf_frame_start(t, k, type);
        if (m == nf && !(t->frames[k].folded & bit) && len - s[k] <= max)
            m = k;
    }
    uint32_t keep = m < nf ? s[m] : len;
    for (uint32_t k = 0; k < nf; k++) {
        cf_frame *f = &t->frames[k];
        if (k < m) {
            cf_fold_frame(t, k, type, q + s[k], keep - s[k]);
            f->folded |= bit;
            f->start[type] = 0;
        } else {
            f->start[type] = s[k] - keep;
        }
        f->started |= bit;
    }
    memmove(q, q + keep, (size_t)(len - keep) * sizeof *q);
    t->len[type] = len - keep;
    t->pend_recorded += keep; /* the outermost invocation's, folded */
}

/* Count one invocation of `entry` in the thread's pending counters. */
static inline __attribute__((always_inline)) void cf_count_entry(cf_thread *t, int entry)
{
    if (CF_LIKELY(entry >= 0 && entry < CF_MAX_ENTRIES)) {
        t->pend_entry[entry]++;
        t->pend_emask |= 1ull << entry;
    }
    if (CF_UNLIKELY(++t->pend_n >= CF_PUBLISH_EVERY))
        cf_publish(t);
}

/* The end of frames[k] (the innermost one, counted): the roles it owns (from `from` on,
 * beyond the enclosing invocations' max_objects) are released, and their quads taken out
 * of the buffers (recorded: they were its accesses), so the enclosing invocations never
 * see them. */
static __attribute__((noinline)) void cf_release_own(cf_thread *t, uint32_t k, uint32_t from)
{
    uint64_t types = 0;
    for (uint32_t i = from; i < t->nroles; i++)
        types |= 1ull << t->roles[i].type;
    for (; types; types &= types - 1) {
        uint32_t type = (uint32_t)__builtin_ctzll(types);
        uint32_t lo = cf_own_min(t, type, from);
        uint64_t *q = cf_slice(t, type);
        uint32_t len = t->len[type], o = cf_frame_start(t, k, type);
        for (uint32_t i = o; i < len; i++)
            if (((uint32_t)(q[i] >> 48) & 0x7fff) < lo)
                q[o++] = q[i];
        t->pend_recorded += len - o;
        t->len[type] = o;
        t->nrole[type] = lo;
    }
    t->nroles = from;
    t->fsize = 0; /* the fast roles may have been among them */
    t->fsize2 = 0;
}

/* ---- nested sequences counted for the outermost summary.  A nested invocation's
 * accesses count for the enclosing ones too: they stay in the type's buffer and are
 * folded into the outermost invocation's summary quad by quad, the one per-access cost
 * of the fold left for an inner loop like zlib's longest_match (5.8 M invocations of 11
 * accesses each in 16 MiB of input).  When the outermost invocation is already a summary
 * and the nested one (the only one) was a literal sequence of the outermost's own role
 * numbers that the outermost's buffer already held once in this invocation (so its first
 * occurrences are in place, in order), its quads are taken out of the buffer and the
 * sequence counted in defer[]; cf_defer_flush adds count * each quad to the hits when the
 * outermost summary ends: the same summary, quad for quad, order and hits. */
static inline uint32_t cf_defer_slot(const cf_seq *c)
{
    return (uint32_t)(((uintptr_t)c >> 4) * 0x9E3779B97F4A7C15ull >> 60) & (CF_DEFER - 1);
}

/* frames[1] ends with the literal sequence c, its n quads at [s, s + n) of the type's
 * buffer (the buffer's end); frames[0] is a summary of the type. */
static inline __attribute__((always_inline)) void cf_defer_nested(cf_thread *t, uint32_t type,
                                                                   cf_seq *c, uint32_t s,
                                                                   uint32_t n)
{
    cf_defer *d = &t->defer[cf_defer_slot(c)];
    if (d->seq && d->gen == t->defer_gen) {
        if (d->seq != c || d->type != type)
            return; /* the slot is another sequence's: this one folds as usual */
        d->count++;
        t->len[type] = s;
        t->pend_recorded += n; /* recorded, once, as the folded quads would be */
        return;
    }
    /* First seen here: its quads stay in the buffer (their first occurrences). */
    d->seq = c;
    d->gen = t->defer_gen;
    d->type = type;
    d->count = 0;
}

/* Before the outermost invocation's summary of `type` (*sp) ends: the deferred
 * occurrences' hits. */
static void cf_defer_flush(cf_thread *t, uint32_t type, cf_sum **sp)
{
    for (uint32_t i = 0; i < CF_DEFER; i++) {
        cf_defer *d = &t->defer[i];
        if (d->seq && d->gen == t->defer_gen && d->type == type && d->count)
            cf_sum_fold_wn(t, sp, d->seq->q, NULL, d->seq->len, d->count);
    }
}

/* End the innermost nested invocation (frames[nest], nest >= 1; the fast role is
 * detached): per type, its accesses are the buffer's quads from its start on (after what
 * it folded), renumbered by first touch within them; a literal sequence when it never
 * folded and they fit in max_accesses, else a summary.  The roles it owns beyond
 * max_objects are released (cf_release_own). */
static void cf_frame_end(cf_thread *t)
{
    uint32_t k = t->nest;
    cf_frame *f = &t->frames[k];
    uint32_t max = cf_max_accesses;
    for (uint64_t m = t->touched | f->folded; m; m &= m - 1) {
        uint32_t type = (uint32_t)__builtin_ctzll(m);
        uint64_t bit = 1ull << type;
        uint32_t s = cf_frame_start(t, k, type);
        uint32_t len = (t->touched & bit) ? t->len[type] : s;
        const uint64_t *q = cf_slice(t, type) + s;
        uint32_t n = len - s;
        if (!(f->folded & bit) && n <= max) {
            if (n) {
                const uint64_t *rq = cf_renumbered(t, type, q, n);
                cf_seq *c = cf_seq_count_recent(t, type, f->entry, n, rq);
                if (c && rq == q && k == 1 && (t->frames[0].folded & bit) &&
                    t->frames[0].sum[type] && !t->frames[0].sum[type]->cut)
                    cf_defer_nested(t, type, c, s, n);
            }
        } else {
            cf_sum_fold(t, &f->sum[type], q, n);
            cf_sum_end(t, &f->sum[type], type, f->entry, 1);
        }
    }
    for (uint64_t m = f->objcut; m; m &= m - 1)
        __atomic_fetch_add(&cf_st_objects[__builtin_ctzll(m)], 1, __ATOMIC_RELAXED);
    uint32_t from = f->rmark > cf_max_objects ? f->rmark : cf_max_objects;
    if (CF_UNLIKELY(t->nroles > from))
        cf_release_own(t, k, from);
    f->objcut = 0;
    f->folded = 0;
    f->started = 0;
    t->nest = k - 1;
    cf_cut_clear(t);
    cf_count_entry(t, f->entry);
}

/* An entry function called inside an invocation (depth > 0; depth already counts this
 * call): a new invocation of its kind, unless an invocation of that entry is active (a
 * recursive call: part of it) or CF_MAX_FRAMES are (stat `deep`). */
/* Open frames[nest + 1] for an invocation of `entry` whose accesses begin at the
 * buffers' ends (len[] current: the fast role detached, or its type's len[] written
 * back), and attach the fast role again. */
static inline __attribute__((always_inline)) void cf_frame_open(cf_thread *t, int entry,
                                                                uintptr_t frame)
{
    cf_frame *f = &t->frames[++t->nest];
    cf_cut_clear(t);
    f->entry = entry;
    f->depth = (uint32_t)t->depth;
    f->frame = frame;
    f->folded = 0;
    f->objcut = 0;
    f->rmark = t->nroles;
    f->started = t->touched;
    for (uint64_t m = t->touched; m; m &= m - 1) {
        uint32_t type = (uint32_t)__builtin_ctzll(m);
        f->start[type] = t->len[type];
    }
    cf_fast_attach(t);
}

static void cf_nest_enter(cf_thread *t, int entry, uintptr_t frame)
{
    if (entry == t->entry)
        return;
    for (uint32_t k = 1; k <= t->nest; k++)
        if (t->frames[k].entry == entry)
            return;
    if (t->nest + 1 >= CF_MAX_FRAMES) {
        __atomic_fetch_add(&cf_st_deep, 1, __ATOMIC_RELAXED);
        return;
    }
    t->active = 0;
    cf_slow_begin(t); /* armed roles numbered (or dropped) before anything is measured */
    cf_frame_open(t, entry, frame);
    t->active = 1;
}

/* The common start of a nested invocation, what cf_enter_slow and cf_nest_enter do for
 * it: the first one nested in the outermost invocation (not left by longjmp, of another
 * entry), which so far touched only the fast role's type (attached, no armed role left to
 * settle).  Returns 0, having changed nothing, in any other case. */
static inline int cf_nest_enter1(cf_thread *t, int entry, uintptr_t frame)
{
    uint32_t type = t->ftype;
    uint64_t *pos = t->fpos;
    if (t->nest || (frame && t->frame && frame >= t->frame) || entry == t->entry ||
        t->armed || !pos || t->fpos3 || t->touched != 1ull << type)
        return 0;
    t->len[type] = (uint32_t)(pos - t->fslice); /* where frames[1] begins */
    t->depth++;
    cf_frame_open(t, entry, frame);
    t->active = 1;
    return 1;
}

/* End nested invocations down to (excluding) frames[keep] (longjmp out of them, or the
 * end of the outermost one): their accesses so far count. */
static void cf_close_nested(cf_thread *t, uint32_t keep)
{
    if (t->nest <= keep)
        return;
    int was = t->active;
    t->active = 0;
    cf_fast_detach(t);
    while (t->nest > keep)
        cf_frame_end(t);
    cf_fast_attach(t);
    t->active = was;
}

/* ------------------------------------------------------------------ invocations */

/* Add the thread's pending invocation counters to the process totals.  Called every
 * CF_PUBLISH_EVERY invocations, when the thread ends, and before a snapshot is written
 * (by the thread writing it: other running threads may hold back up to
 * CF_PUBLISH_EVERY - 1 invocations in a snapshot taken while they run). */
static __attribute__((noinline, cold)) void cf_publish(cf_thread *t)
{
    cf_recent_flush(t);
    if (!t->pend_n)
        return;
    __atomic_fetch_add(&cf_invocations, t->pend_n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&cf_recorded_total, t->pend_recorded, __ATOMIC_RELAXED);
    for (uint64_t m = t->pend_emask; m; m &= m - 1) {
        int e = __builtin_ctzll(m);
        __atomic_fetch_add(&cf_entry_count[e], t->pend_entry[e], __ATOMIC_RELAXED);
        t->pend_entry[e] = 0;
    }
    t->pend_emask = 0;
    t->pend_n = 0;
    t->pend_recorded = 0;
    uint32_t *al = t->align;
    if (al) {
        int nt = __atomic_load_n(&cf_ntypes, __ATOMIC_ACQUIRE);
        for (int i = 0; i < nt; i++, al += CF_ALIGN_LINE) {
            uint32_t any = 0;
            for (int j = 0; j < CF_ALIGN_LINE; j++)
                any |= al[j];
            if (!any)
                continue;
            for (int j = 0; j < CF_ALIGN_LINE; j++)
                if (al[j]) {
                    __atomic_fetch_add(&cf_st_align[i][j], al[j], __ATOMIC_RELAXED);
                    al[j] = 0;
                }
        }
    }
}

/* Count the sequences and summaries of every type the outermost invocation touched (the
 * general case of cf_flush); returns the number of accesses recorded (what is left in the
 * buffers: cf_make_room counted what it folded). */
static __attribute__((noinline)) uint64_t cf_flush_types(cf_thread *t, uint64_t m)
{
    uint64_t recorded = 0;
    cf_frame *f = &t->frames[0];
    while (m) {
        uint32_t type = (uint32_t)__builtin_ctzll(m);
        m &= m - 1;
        uint32_t out = t->outside[type], len = t->len[type];
        if (out & CF_OUT_COUNT)
            __atomic_fetch_add(&cf_st_outside[type], out & CF_OUT_COUNT, __ATOMIC_RELAXED);
        if (out & CF_OUT_OBJCUT)
            __atomic_fetch_add(&cf_st_objects[type], 1, __ATOMIC_RELAXED);
        const uint64_t *q = cf_slice(t, type);
        if ((f->folded >> type & 1) || len > cf_max_accesses) {
            cf_sum_fold(t, &f->sum[type], q, len);
            cf_defer_flush(t, type, &f->sum[type]);
            cf_sum_end(t, &f->sum[type], type, t->entry, 0);
        } else if (len) {
            cf_seq_count_recent(t, type, t->entry, len, q);
        }
        recorded += len;
    }
    f->folded = 0;
    f->started = 0;
    return recorded;
}

/* End the outermost invocation (after the nested ones still active: left by longjmp). */
static void cf_flush(cf_thread *t)
{
    if (CF_UNLIKELY(t->nest))
        cf_close_nested(t, 0);
    cf_cut_clear_all(t);
    cf_fast_detach(t);
    cf_count_merge(t); /* before anything reads the summaries */
    if (t->armed == 2 && !cf_settle_armed(t)) {
        t->nroles = 0;
        t->touched = 0;
    }
    if (t->armed != 1 || t->len[t->roles[0].type]) /* else: its armed role never touched */
        cf_align_roles(t);
    if (CF_UNLIKELY(RD(cf_share_on)))
        cf_share_end(t);
    t->fsize2 = 0; /* a role of this invocation only */
    t->armed = 0;
    t->rearmed = 0;
    uint64_t m = t->touched;
    uint32_t type = (uint32_t)__builtin_ctzll(m | 1ull << 63);
    /* The common case inline: one type touched, a sequence neither long nor with accesses
     * in padding or objects left out. */
    if (CF_LIKELY(m && !(m & (m - 1)) && !t->outside[type] && t->len[type])) {
        uint32_t len = t->len[type];
        cf_seq_count_recent(t, type, t->entry, len, cf_slice(t, type));
        t->pend_recorded += len;
    } else if (m) {
        t->pend_recorded += cf_flush_types(t, m);
    }
    t->touched = 0;
    t->defer_gen++; /* what was deferred counted for this invocation only */
    cf_count_entry(t, t->entry);
}

/* Start an invocation.  The previous invocation's role 0 (roles[0], kept across
 * invocations; zero-sized until the thread's first object) is armed as the fast role:
 * if the invocation's first access of its type falls inside it and the registry is
 * unchanged, that access takes the fast path with no lookup.  cf_slow_begin disarms it
 * if another access comes first. */
static inline __attribute__((always_inline)) void cf_begin(cf_thread *t, int entry,
                                                           uintptr_t frame)
{
    t->depth = 1;
    t->frame = frame;
    t->entry = entry;
    const cf_role *r = &t->roles[0];
    uintptr_t size = r->size;
    if (CF_UNLIKELY(t->noarm)) {
        t->noarm--;
        size = 0;
    }
    if (CF_UNLIKELY(r->seq & CF_SEQ_NESTED))
        size = 0; /* never a fast role (cf_record_nested) */
    t->fsize = size;
    t->fsize2 = 0;
    if (CF_LIKELY(size)) {
        uint32_t type = r->type;
        uint32_t max = cf_max_accesses;
        uint64_t *slice = r->slice;
        t->fbase = r->base;
        t->fseq = r->seq;
        t->ftag = 0;
        t->fslice = slice;
        t->ftype = type;
        t->fpos = slice;
        t->fend = slice + max;
        cf_type_start(t, type, 1);
        t->nroles = 1;
        t->armed = 1;
    } else {
        t->nroles = 0;
        t->touched = 0;
    }
    t->active = 1;
}

/* __cachefit_enter when the thread is already in an invocation (a nested entry, or
 * invocations left by longjmp) or not set up yet.  An active invocation whose scope
 * variable lies at or below the new one's was left without its end (longjmp): it ends
 * now, with the ones nested in it, and so do the calls entered after it. */
static __attribute__((noinline)) int cf_enter_slow(cf_thread *t, int entry, uintptr_t frame)
{
    if (t->depth > 0 && cf_nest_fast && cf_nest_enter1(t, entry, frame))
        return 0;
    if (t->depth > 0) {
        if (frame && t->frame && frame >= t->frame) {
            t->active = 0;
            t->depth = 0;
            cf_flush(t);
        } else {
            for (uint32_t k = 1; k <= t->nest; k++) {
                cf_frame *f = &t->frames[k];
                if (frame && f->frame && frame >= f->frame) {
                    t->depth = (int)f->depth - 1;
                    cf_close_nested(t, k - 1);
                    break;
                }
            }
            t->depth++;
            cf_nest_enter(t, entry, frame);
            return 0;
        }
    }
    if (!t->ready) {
        cf_init();
        if (!cf_thread_setup(t))
            return 0;
        cf_share_thread(t);
    }
    cf_begin(t, entry, frame);
    return 0;
}

int __cachefit_enter(int entry, void *frame)
{
    cf_thread *t = &cf_self;
    if (CF_LIKELY(t->rearmed && t->depth == 0)) {
        /* The previous invocation ended with one object touched, and left it armed
         * (with no room: see cf_leave_rearm). */
        t->depth = 1;
        t->frame = (uintptr_t)frame;
        t->entry = entry;
        t->fend = t->fslice + cf_max_accesses;
        t->active = 1;
        return 0;
    }
    if (CF_UNLIKELY(t->depth > 0 || !t->ready))
        return cf_enter_slow(t, entry, (uintptr_t)frame);
    cf_begin(t, entry, (uintptr_t)frame);
    return 0;
}

int cf_enter(int entry, uintptr_t frame)
{
    return __cachefit_enter(entry, (void *)frame);
}

/* __cachefit_leave in general: nested or unbalanced ends, several types touched, an
 * empty, long or padding-touching sequence, counters due for publishing, a dump
 * requested by signal.  `scope` is the address of the ending call's scope variable (0:
 * unknown): nested invocations whose own lie below it were left by longjmp and end first,
 * with the calls entered after them. */
/* The part of cf_leave_slow for nested invocations: those left by longjmp end, then the
 * innermost one if this call began it (1: done). */
static __attribute__((noinline)) int cf_leave_nested(cf_thread *t, uintptr_t scope)
{
    while (t->nest && scope && t->frames[t->nest].frame && t->frames[t->nest].frame < scope) {
        t->depth = (int)t->frames[t->nest].depth - 1;
        cf_close_nested(t, t->nest - 1);
    }
    if (t->nest && (uint32_t)t->depth == t->frames[t->nest].depth) {
        cf_close_nested(t, t->nest - 1);
        t->depth--;
        return 1;
    }
    return 0;
}

/* The common end of a nested invocation, what cf_leave_nested and cf_frame_end do for
 * it with nothing to look up: the only one (frames[1]), ended by its own call, whose
 * accesses all went to the fast role's type (attached, one object of it in the whole
 * invocation: no role to renumber) while nothing of it was folded, none of its own roles
 * and no object left out.  Returns 0, having changed nothing, in any other case. */
static inline int cf_leave_nested1(cf_thread *t, uintptr_t scope)
{
    cf_frame *f = &t->frames[1];
    uint32_t type = t->ftype;
    uint64_t bit = 1ull << type;
    uint64_t *pos = t->fpos;
    if (t->nest != 1 || (uint32_t)t->depth != f->depth || (scope && f->frame && f->frame < scope) ||
        !pos || t->fpos3 || t->touched != bit || !(f->started & bit) || f->folded ||
        f->objcut || t->nroles != f->rmark || t->nrole[type] != 1)
        return 0;
    uint32_t len = (uint32_t)(pos - t->fslice), s = f->start[type], n = len - s;
    if (!n || n > cf_max_accesses)
        return 0;
    int was = t->active;
    t->active = 0;
    t->len[type] = len;
    t->fpos = NULL; /* detached (cf_fast_detach) while the sequence is counted */
    t->fend = NULL;
    cf_align_role(t, type, 0);
    cf_seq *c = cf_seq_count_recent(t, type, f->entry, n, t->fslice + s);
    cf_frame *f0 = &t->frames[0];
    if (c && (f0->folded & bit) && f0->sum[type] && !f0->sum[type]->cut)
        cf_defer_nested(t, type, c, s, n);
    f->started = 0;
    t->nest = 0;
    cf_cut_clear(t);
    cf_count_entry(t, f->entry);
    cf_fast_attach(t);
    t->depth--;
    t->active = was;
    return 1;
}

static __attribute__((noinline)) void cf_leave_slow(cf_thread *t, uintptr_t scope)
{
    if (CF_UNLIKELY(t->nest) &&
        ((cf_nest_fast && cf_leave_nested1(t, scope)) || cf_leave_nested(t, scope)))
        return;
    if (t->depth != 1) {
        if (t->depth > 1)
            t->depth--;
        return;
    }
    t->depth = 0;
    t->active = 0;
    cf_flush(t);
    if (CF_UNLIKELY(cf_dump_requested)) {
        cf_dump_requested = 0;
        cf_dump_now();
    }
}

/* The end of __cachefit_leave when the sequence (t->len[t->ftype] quads at t->fslice) is
 * not the one in its recent slot; reads its arguments back from the thread so that the
 * caller keeps nothing across the call. */
static __attribute__((noinline)) void cf_leave_miss(void)
{
    cf_thread *t = &cf_self;
    uint32_t type = t->ftype;
    (void)cf_seq_count_miss(t, type, cf_seq_key(t->entry, t->len[type]), t->fslice);
}

/* After an invocation that __cachefit_leave ends itself: leave its object (or its two
 * objects of one type, settled) armed for the next one, or nothing. */
static inline __attribute__((always_inline)) void cf_leave_rearm(cf_thread *t, uint32_t type,
                                                                 uint64_t *slice)
{
    if (t->nroles == 1) {
        /* roles[0] is the fast role, its type's state is as cf_begin would set it.  Armed
         * with no room (fend at fpos) until __cachefit_enter gives it: the inlined checks
         * record into the fast role without testing `active`. */
        t->fpos = slice;
        t->fend = slice;
        t->armed = 1;
        t->rearmed = 1;
    } else if (t->nroles == 2 && t->roles[1].type == type &&
               t->roles[1].seq == t->roles[0].seq && t->roles[0].slice == slice) {
        /* Two objects of the fast role's type (a sender and a receiver): both stay armed,
         * this invocation's role 1 as role 0 when the last armed invocation began with
         * the role 1 of the one before (the two taking turns).  Their numbers are
         * settled by first touch (cf_settle_armed). */
        t->armswap = t->alt;
        if (t->alt)
            cf_swap_roles01(t);
        cf_fast_pair(t);
        cf_type_start(t, type, 2);
        t->fpos = slice;
        t->fend = slice; /* no room until __cachefit_enter */
        t->armed = 2;
        t->rearmed = 1;
    } else {
        t->fpos = NULL;
        t->fend = NULL;
        t->armed = 0;
        t->rearmed = 0;
        t->touched = 0;
    }
}

/* The counting half of __cachefit_leave: the pending invocation counters, then the
 * sequence (len quads at slice) through its recent slot. */
static inline __attribute__((always_inline)) void cf_leave_count(cf_thread *t, uint32_t type,
                                                                 uint32_t len, uint64_t *slice)
{
    int entry = t->entry;
    t->pend_recorded += len;
    t->pend_n++;
    if (CF_LIKELY((unsigned)entry < CF_MAX_ENTRIES)) {
        t->pend_entry[entry]++;
        t->pend_emask |= 1ull << entry;
    }
    uint32_t k = cf_recent_slot(len, slice);
    cf_seq *c = t->recent[type][k];
    if (CF_LIKELY(c && c->key == cf_seq_key(entry, len) && cf_quads_equal(c->q, slice, len)))
        t->rpend[type][k]++;
    else
        cf_leave_miss();
}

/* __cachefit_leave for an invocation with two armed roles or not one object: settle
 * the armed roles (their numbers may change the quads), re-arm, count.  Reads its
 * arguments back from the thread. */
static __attribute__((noinline)) void cf_leave_pair(void)
{
    cf_thread *t = &cf_self;
    uint32_t type = t->ftype;
    uint64_t *slice = t->fslice;
    uint32_t len = t->len[type];
    if (t->armed == 2)
        cf_settle_armed(t); /* len > 0: at least one of the two was touched */
    cf_align_roles(t);
    cf_leave_rearm(t, type, slice);
    cf_leave_count(t, type, len, slice);
}

/* End an invocation.  The common case is inline: the outermost end, only the fast
 * role's type touched, its sequence neither empty nor long nor touching padding, no
 * counters due for publishing and no dump requested; the sequence is counted through
 * its recent slot.  When the invocation touched one object (role 0), it stays armed for
 * the next invocation (rearmed: __cachefit_enter only sets the frame). */
void __cachefit_leave(int *scope)
{
    cf_thread *t = &cf_self;
    uint64_t *pos = t->fpos, *slice = t->fslice;
    uint32_t type = t->ftype;
    if (CF_UNLIKELY(t->depth != 1 || t->touched != 1ull << type || pos <= slice ||
                    pos >= t->fend || t->outside[type] || t->pend_n >= CF_PUBLISH_EVERY - 1 ||
                    cf_dump_requested || RD(cf_share_on))) {
        cf_leave_slow(t, (uintptr_t)scope);
        return;
    }
    t->depth = 0;
    t->active = 0;
    t->fsize2 = 0; /* a role of this invocation only */
    uint32_t len = (uint32_t)(pos - slice);
    t->len[type] = len;
    if (CF_UNLIKELY(t->nroles != 1 || t->armed == 2)) {
        cf_leave_pair(); /* nothing is live across it: no registers to save here */
        return;
    }
    /* roles[0] is the fast role, its type's state is as cf_begin would set it; no room
     * until __cachefit_enter (cf_leave_rearm). */
    t->align[type * CF_ALIGN_LINE + (t->fbase & (CF_ALIGN_LINE - 1))]++;
    t->fpos = slice;
    t->fend = slice;
    t->armed = 1;
    t->rearmed = 1;
    cf_leave_count(t, type, len, slice);
}

void cf_leave(void)
{
    __cachefit_leave(NULL);
}

/* ------------------------------------------------------------------ output */

typedef struct cf_out {
    int fd;
    int err;
    size_t n;
    char buf[1 << 16];
} cf_out;

static cf_out cf_outbuf; /* used under cf_seq_mu only */

static void cf_out_flush(cf_out *o)
{
    size_t off = 0;
    while (off < o->n && !o->err) {
        ssize_t w = write(o->fd, o->buf + off, o->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            o->err = 1;
        else
            off += (size_t)w;
    }
    o->n = 0;
}

static void cf_out_bytes(cf_out *o, const char *s, size_t len)
{
    while (len) {
        if (o->n == sizeof o->buf)
            cf_out_flush(o);
        size_t k = sizeof o->buf - o->n;
        if (k > len)
            k = len;
        memcpy(o->buf + o->n, s, k);
        o->n += k;
        s += k;
        len -= k;
    }
}

__attribute__((format(printf, 2, 3))) static void cf_out_fmt(cf_out *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        cf_out_bytes(o, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* cf_out_bytes for cf_share_dump. */
static void cf_out_put(void *o, const char *s, size_t len)
{
    cf_out_bytes(o, s, len);
}

/* The decimal digits of v at p; returns the end. */
static char *cf_utoa(char *p, uint64_t v)
{
    char d[20];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

/* One access of a `seq` line (" ROLE:OFFSET:SIZE:MODE") or, with hits, of a `sum` line
 * (":HITS" after it): what "%u:%u:%u:%c" and ":%llu" would print, without printf (a
 * snapshot writes every access of every sequence and summary). */
static void cf_out_quad(cf_out *o, uint64_t q, int with_hits, uint64_t hits)
{
    char tmp[96], *p = tmp;
    *p++ = ' ';
    p = cf_utoa(p, (q >> 48) & 0x7fff);
    *p++ = ':';
    p = cf_utoa(p, (uint32_t)q);
    *p++ = ':';
    p = cf_utoa(p, (q >> 32) & 0xffff);
    *p++ = ':';
    *p++ = (q >> 63) ? 'w' : 'r';
    if (with_hits) {
        *p++ = ':';
        p = cf_utoa(p, hits);
    }
    cf_out_bytes(o, tmp, (size_t)(p - tmp));
}

void cf_dump_now(void)
{
    if (!cf_trace_dir[0])
        return;
    cf_publish(&cf_self);
    char path[4200], tmp[4220];
    pid_t pid = getpid();
    snprintf(path, sizeof path, "%s/cachefit-%ld.raw", cf_trace_dir, (long)pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    pthread_mutex_lock(&cf_type_mu);
    pthread_mutex_lock(&cf_seq_mu);
    cf_out *o = &cf_outbuf;
    o->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    o->err = o->fd < 0;
    o->n = 0;
    if (!o->err) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ns = (long long)(now.tv_sec - cf_start.tv_sec) * 1000000000ll +
                       (now.tv_nsec - cf_start.tv_nsec);
        char exe[4096];
        ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[el > 0 ? el : 0] = 0;
        cf_out_fmt(o, "cachefit-raw 2\npid %ld\nppid %ld\nexe %s\nwall_ns %lld\n", (long)pid,
                   (long)getppid(), exe, ns);
        cf_out_fmt(o, "max_accesses %u\nmax_objects %u\nmax_distinct %u\n", cf_max_accesses,
                   cf_max_objects, cf_max_distinct);
        cf_out_fmt(o, "invocations %llu\nrecorded %llu\ndeep %llu\n",
                   (unsigned long long)RD(cf_invocations),
                   (unsigned long long)RD(cf_recorded_total), (unsigned long long)RD(cf_st_deep));
        if (__cachefit_blob) {
            size_t bl = strnlen(__cachefit_blob, 1u << 30);
            cf_out_fmt(o, "blob %zu\n", bl);
            cf_out_bytes(o, __cachefit_blob, bl);
            cf_out_bytes(o, "\n", 1);
        }
        for (int i = 0; i < cf_ntypes; i++)
            cf_out_fmt(o, "type %d %s\n", i, cf_type_names[i]);
        for (int i = 0; i < cf_nentries; i++)
            cf_out_fmt(o, "entry %d %llu %s\n", i, (unsigned long long)RD(cf_entry_count[i]),
                       cf_entry_names[i]);
        for (int i = 0; i < cf_ntypes; i++)
            cf_out_fmt(o, "stat %d %llu %llu %llu %llu\n", i,
                       (unsigned long long)RD(cf_st_outside[i]),
                       (unsigned long long)RD(cf_st_full[i]),
                       (unsigned long long)RD(cf_st_objects[i]),
                       (unsigned long long)RD(cf_st_distinct[i]));
        for (int i = 0; i < cf_ntypes; i++) {
            int any = 0;
            for (int j = 0; j < CF_ALIGN_LINE; j++) {
                uint64_t c = RD(cf_st_align[i][j]);
                if (!c)
                    continue;
                if (!any)
                    cf_out_fmt(o, "align %d", i);
                any = 1;
                cf_out_fmt(o, " %d:%llu", j, (unsigned long long)c);
            }
            if (any)
                cf_out_bytes(o, "\n", 1);
        }
        for (int i = 0; i < cf_ntypes; i++)
            cf_out_fmt(o, "objects %d %llu\n", i, (unsigned long long)RD(cf_st_registered[i]));
        for (int i = 0; i < cf_ntypes; i++)
            if (RD(cf_st_reused[i]))
                cf_out_fmt(o, "reused %d %llu\n", i, (unsigned long long)RD(cf_st_reused[i]));
        cf_share_dump(cf_ntypes, cf_out_put, o);
        for (cf_seq *s = cf_seq_all; s; s = s->all) {
            cf_out_fmt(o, "seq %u %d %llu %u", s->type, (int)(uint32_t)(s->key >> 32),
                       (unsigned long long)RD(s->count), s->len);
            for (uint32_t k = 0; k < s->len; k++)
                cf_out_quad(o, s->q[k], 0, 0);
            cf_out_bytes(o, "\n", 1);
        }
        for (cf_sumrec *s = cf_sum_all; s; s = s->all) {
            cf_out_fmt(o, "sum %u %d %llu %u", s->type, (int)(uint32_t)(s->key >> 32),
                       (unsigned long long)s->count, s->n);
            for (uint32_t k = 0; k < s->n; k++)
                cf_out_quad(o, s->q[k], 1, s->hits[k]);
            cf_out_bytes(o, "\n", 1);
        }
        for (cf_sumcls *c = cf_cls_all; c; c = c->all) {
            cf_out_fmt(o, "sum %u %d %llu %u", c->type, c->entry, (unsigned long long)c->count,
                       c->n);
            for (uint32_t k = 0; k < c->n; k++)
                cf_out_quad(o, c->q[k], 1, c->hits[k]);
            cf_out_bytes(o, "\n", 1);
        }
        for (int i = 0; i < CF_MAX_TYPES; i++)
            for (int e = 0; e <= CF_MAX_ENTRIES; e++) {
                cf_sum *s = cf_overflow[i][e];
                if (!s || !s->n)
                    continue;
                cf_sum_flat(s);
                cf_out_fmt(o, "sum %d %d %llu %u", i, e - 1,
                           (unsigned long long)cf_overflow_n[i][e], s->n);
                for (uint32_t k = 0; k < s->n; k++)
                    cf_out_quad(o, s->q[k], 1, s->hits[k]);
                cf_out_bytes(o, "\n", 1);
            }
        cf_out_bytes(o, "end\n", 4);
        cf_out_flush(o);
        if (close(o->fd) != 0)
            o->err = 1;
        if (!o->err)
            rename(tmp, path);
        else
            unlink(tmp);
    }
    pthread_mutex_unlock(&cf_seq_mu);
    pthread_mutex_unlock(&cf_type_mu);
}

/* ------------------------------------------------------------------ startup */

/* The next space-separated word of a blob line (at most cap - 1 characters kept). */
const char *cf_parse_word(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    while (*s == ' ')
        s++;
    while (*s && *s != ' ' && *s != '\n') {
        if (n + 1 < cap)
            out[n++] = *s;
        s++;
    }
    out[n] = 0;
    return s;
}

const char *cf_parse_global(const char *s, cf_blob_global *g)
{
    char ad[32], cn[32], el[32], st[32], name[CF_NAME_MAX];
    s = cf_parse_word(s, ad, sizeof ad);
    s = cf_parse_word(s, cn, sizeof cn);
    s = cf_parse_word(s, el, sizeof el);
    s = cf_parse_word(s, st, sizeof st);
    s = cf_parse_word(s, name, sizeof name);
    g->addr = (uintptr_t)strtoull(ad, NULL, 16);
    g->count = (uintptr_t)strtoull(cn, NULL, 10);
    g->elem = (uintptr_t)strtoull(el, NULL, 10);
    g->stride = (uintptr_t)strtoull(st, NULL, 10);
    g->type = cf_type_id(name);
    return s;
}

/* The blob: "CACHEFIT-BLOB-1\n" then lines "self HEX", "limit NAME N", "type NAME",
 * "alias NAME TYPE", "entry NAME", "global HEXADDR COUNT ELEM STRIDE TYPE",
 * "layout JSON" (ignored here).  Addresses are link-time; `self` is the blob's own
 * link-time address, so the load bias is &blob - self. */
static void cf_load_blob(void)
{
    const char *b = __cachefit_blob;
    if (!b || strncmp(b, "CACHEFIT-BLOB-1\n", 16) != 0)
        return;
    uintptr_t bias = 0;
    for (const char *line = b + 16; *line;) {
        const char *eol = strchr(line, '\n');
        char word[CF_NAME_MAX], a1[CF_NAME_MAX], a2[CF_NAME_MAX];
        const char *s = cf_parse_word(line, word, sizeof word);
        if (strcmp(word, "self") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            bias = (uintptr_t)b - (uintptr_t)strtoull(a1, NULL, 16);
        } else if (strcmp(word, "limit") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            s = cf_parse_word(s, a2, sizeof a2);
            unsigned long long v = strtoull(a2, NULL, 10);
            if (strcmp(a1, "max_accesses") == 0 && v >= 1 && v <= (1u << 24))
                cf_max_accesses = (uint32_t)v;
            else if (strcmp(a1, "max_objects") == 0 && v >= 1 && v <= 32767)
                cf_max_objects = (uint32_t)v;
            else if (strcmp(a1, "max_sequences") == 0 && v >= 1)
                cf_max_sequences = v;
            else if (strcmp(a1, "max_distinct") == 0 && v >= 1 && v <= (1u << 24))
                cf_max_distinct = (uint32_t)v;
        } else if (strcmp(word, "type") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            cf_type_id(a1);
        } else if (strcmp(word, "alias") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            s = cf_parse_word(s, a2, sizeof a2);
            int id = cf_type_id(a2);
            if (id >= 0 && cf_naliases < CF_MAX_ALIASES) {
                cf_normalize(a1, cf_alias_from[cf_naliases], CF_NAME_MAX);
                cf_alias_to[cf_naliases++] = id;
                if (strchr(a1, '@'))
                    cf_named_definitions = 1;
            }
        } else if (strcmp(word, "fields") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            cf_fields_load(cf_type_lookup(a1), s);
        } else if (strcmp(word, "entry") == 0) {
            s = cf_parse_word(s, a1, sizeof a1);
            if (cf_nentries < CF_MAX_ENTRIES)
                memcpy(cf_entry_names[cf_nentries++], a1, sizeof a1);
        } else if (strcmp(word, "global") == 0) {
            cf_blob_global g;
            s = cf_parse_global(s, &g);
            cf_register(g.addr + bias, g.count, g.elem, g.stride, g.type, 0);
        }
        (void)s;
        if (!eol)
            break;
        line = eol + 1;
    }
}

static void cf_atexit(void)
{
    cf_thread *t = &cf_self;
    if (t->depth > 0) { /* exit() called inside invocations: count what we have */
        cf_close_nested(t, 0);
        t->depth = 1;
        cf_leave();
    }
    cf_dump_now();
}

static void cf_fork_prepare(void)
{
    pthread_mutex_lock(&cf_type_mu);
    pthread_mutex_lock(&cf_reg_mu);
    pthread_mutex_lock(&cf_seq_mu);
}

static void cf_fork_parent(void)
{
    pthread_mutex_unlock(&cf_seq_mu);
    pthread_mutex_unlock(&cf_reg_mu);
    pthread_mutex_unlock(&cf_type_mu);
}

/* The child starts with an empty sequence table: the parent writes what it
 * counted before the fork, the child writes only its own invocations. */
static void cf_fork_child(void)
{
    pthread_mutex_init(&cf_seq_mu, NULL);
    pthread_mutex_init(&cf_reg_mu, NULL);
    pthread_mutex_init(&cf_type_mu, NULL);
    cf_seqtab = NULL;
    cf_seq_all = NULL;
    cf_seq_tail = &cf_seq_all;
    cf_nseqs = 0;
    cf_arena = NULL;
    cf_arena_left = 0;
    cf_invocations = cf_recorded_total = 0;
    cf_sumtab = NULL; /* the parent's (still mapped, unused) */
    cf_sumtab_cap = 0;
    cf_sum_all = NULL;
    cf_sum_tail = &cf_sum_all;
    cf_nsums = 0;
    cf_clstab = NULL; /* the parent's classes (still mapped, unused) */
    cf_clstab_cap = 0;
    cf_cls_all = NULL;
    cf_cls_tail = &cf_cls_all;
    cf_ncls = 0;
    memset(cf_overflow, 0, sizeof cf_overflow); /* the parent's (still mapped, unused) */
    memset(cf_overflow_n, 0, sizeof cf_overflow_n);
    cf_st_deep = 0;
    memset(cf_st_objects, 0, sizeof cf_st_objects);
    memset(cf_st_distinct, 0, sizeof cf_st_distinct);
    memset(cf_st_align, 0, sizeof cf_st_align);
    if (cf_self.align)
        memset(cf_self.align, 0, CF_MAX_TYPES * CF_ALIGN_LINE * sizeof(uint32_t));
    memset(cf_self.recent, 0, sizeof cf_self.recent); /* entries of the parent's table */
    memset(cf_self.rpend, 0, sizeof cf_self.rpend); /* the parent adds its own */
    cf_self.pend_n = 0; /* the parent adds what its thread held back */
    cf_self.pend_recorded = 0;
    cf_self.pend_emask = 0;
    memset(cf_self.pend_entry, 0, sizeof cf_self.pend_entry);
    memset(cf_st_outside, 0, sizeof cf_st_outside);
    memset(cf_st_full, 0, sizeof cf_st_full);
    memset(cf_entry_count, 0, sizeof cf_entry_count);
    cf_stack_known = 0;
    cf_share_fork_child(&cf_self);
    clock_gettime(CLOCK_MONOTONIC, &cf_start);
}

static void cf_on_signal(int sig)
{
    (void)sig;
    cf_dump_requested = 1;
}

static int cf_signal_number(const char *s)
{
    if (!s || !*s)
        return 0;
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    if (strcmp(s, "USR1") == 0)
        return SIGUSR1;
    if (strcmp(s, "USR2") == 0)
        return SIGUSR2;
    if (strcmp(s, "HUP") == 0)
        return SIGHUP;
    char *end;
    long v = strtol(s, &end, 10);
    return (*end || v <= 0 || v >= 65) ? 0 : (int)v;
}

static pthread_once_t cf_once = PTHREAD_ONCE_INIT;

static void cf_init_once(void)
{
    clock_gettime(CLOCK_MONOTONIC, &cf_start);
    const char *dir = getenv("CACHEFIT_TRACE_DIR");
    if (dir && strlen(dir) < sizeof cf_trace_dir)
        strcpy(cf_trace_dir, dir);
    cf_load_blob();
    cf_max_accesses = (uint32_t)cf_env_u64("CACHEFIT_MAX_ACCESSES", cf_max_accesses, 1, 1u << 24);
    cf_max_objects = (uint32_t)cf_env_u64("CACHEFIT_MAX_OBJECTS", cf_max_objects, 1, 32767);
    cf_max_sequences = cf_env_u64("CACHEFIT_MAX_SEQUENCES", cf_max_sequences, 1, UINT64_MAX);
    cf_max_distinct = (uint32_t)cf_env_u64("CACHEFIT_MAX_DISTINCT", cf_max_distinct, 1, 1u << 24);
    cf_count_on = (int)cf_env_u64("CACHEFIT_COUNT", 1, 0, 1);
    cf_nest_fast = (int)cf_env_u64("CACHEFIT_NEST_FAST", 1, 0, 1);
    cf_exact_summaries = (int)cf_env_u64("CACHEFIT_EXACT_SUMMARIES", 0, 0, 1);
    cf_thread_key_ok = pthread_key_create(&cf_thread_key, cf_thread_release) == 0;
    pthread_atfork(cf_fork_prepare, cf_fork_parent, cf_fork_child);
    atexit(cf_atexit);
    cf_dump_signal = cf_signal_number(getenv("CACHEFIT_DUMP_SIGNAL"));
    if (cf_dump_signal) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cf_on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(cf_dump_signal, &sa, NULL);
    }
}

void cf_init(void)
{
    pthread_once(&cf_once, cf_init_once);
}

__attribute__((constructor(101))) static void cf_constructor(void)
{
    cf_init();
}

/* Referenced by the link-step object so the core is always linked in. */
void __cachefit_rt_anchor(void) {}
