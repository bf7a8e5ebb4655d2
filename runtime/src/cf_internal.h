/* cf_internal.h - shared state of the cachefit tracing runtime and its per-access path.
 *
 * The per-access path (cf_access) is what every instrumented load and store calls.
 * It must stay a few instructions for accesses outside an invocation or outside the
 * address range of registered objects, and must never allocate, lock or make a
 * system call.  Everything that allocates or locks lives in cf_core.c and runs at
 * registration, at invocation begin/end, or at dump time.
 */
#ifndef CF_INTERNAL_H
#define CF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define CF_HIDDEN __attribute__((visibility("hidden")))
#define CF_TLS __thread __attribute__((tls_model("initial-exec")))
#define CF_LIKELY(x) __builtin_expect(!!(x), 1)
#define CF_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WR(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

enum { CF_MAX_TYPES = 64, CF_MAX_ENTRIES = 64, CF_NAME_MAX = 128 };
/* Invocations active at once on a thread (kinds of operation nested in each other); an
 * entry called deeper counts only for the enclosing ones (stat `deep`). */
enum { CF_MAX_FRAMES = 8 };
/* Flags in the high bits of cf_thread.outside[type] (its low bits count accesses in
 * padding): the per-access path and __cachefit_leave's common case test the word
 * anyway, so these force the general end of an invocation at no cost. */
#define CF_OUT_LONG 0x80000000u  /* longer than max_accesses: grown, maybe folded */
#define CF_OUT_OBJCUT 0x40000000u /* objects beyond max_objects were not recorded */
#define CF_OUT_COUNT 0x3fffffffu
enum { CF_READ = 0, CF_WRITE = 1 };
/* Roles the per-access path checks inline; invocations rarely touch more objects. */
/* The line size of the alignment histogram (raw trace `align` lines). */
enum { CF_ALIGN_LINE = 64 };
enum { CF_INLINE_ROLES = 4, CF_OBJ_CACHE = 8, CF_NEG_CACHE = 4, CF_GRAN_SHIFT = 8, CF_RECENT = 8,
       CF_CUT_CACHE = 8, CF_DEFER = 16 };

/* A nested invocation's literal sequence that the outermost invocation's summary already
 * holds, and how many more times it occurred since (cf_core.c, cf_defer_*); valid while
 * gen is the thread's defer_gen. */
typedef struct cf_defer {
    struct cf_seq *seq;
    uint64_t count;
    uint64_t gen;
    uint32_t type;
} cf_defer;

/* One registered object or array: `span` bytes from `base`; elements of `elem`
 * bytes every `stride` bytes (a single object has elem == stride == span). */
typedef struct cf_obj {
    uintptr_t base;
    uintptr_t span;
    uint32_t elem;
    uint32_t stride;
    uint32_t type;
    uint32_t flags;
} cf_obj;

/* An object this invocation has touched: its role number within its type. */
typedef struct cf_role {
    uintptr_t base;
    uintptr_t size;
    unsigned long seq; /* registry version at which base/size were confirmed */
    uint32_t type;
    uint32_t role;
    uint64_t tag;   /* role << 48, or'ed into each quad (roles of the invocation only) */
    uint64_t *slice; /* the type's sequence buffer (roles of the invocation only) */
} cf_role;

typedef struct cf_sum cf_sum;

/* An entry of cf_thread.cut0: an object left out by max_objects in the outermost
 * invocation, [base, base + size) at registry version seq, valid while gen is the thread's
 * cut0_gen. */
enum { CF_CUT0 = 256 };
typedef struct cf_cut0 {
    uintptr_t base;
    uintptr_t size;
    unsigned long seq;
    unsigned long gen;
} cf_cut0;

/* An entry of cf_thread.negc: granule + 1 (0: empty), the registry version, and the
 * bytes [lo, hi) of the granule (offsets) that no registered object met at that version. */
enum { CF_NEGC = 1024 };
typedef struct cf_negc {
    uintptr_t gran;
    unsigned long seq;
    uint32_t lo, hi;
} cf_negc;

/* An active invocation (cf_core.c): frames[0] is the outermost one (its entry and frame
 * address are cf_thread.entry and .frame), frames[1 .. nest] the invocations of other
 * entry functions nested in it.  Every access of an inner invocation is also one of each
 * enclosing invocation: all share the per-type buffers, and an inner one begins at
 * start[type] of the type's buffer (when its bit is in `started`; else at 0: the type was
 * first touched inside it).  Accesses folded out of the buffer when it filled up are in
 * sum[type] (bit in `folded`). */
typedef struct cf_frame {
    int entry;
    uint32_t depth;   /* cf_thread.depth after its __cachefit_enter */
    uintptr_t frame;  /* address of its scope variable, 0: unknown */
    uint64_t started;
    uint64_t folded;
    uint64_t objcut;  /* types of which it lost objects (stat `objects`; frames >= 1) */
    uint32_t rmark;   /* cf_thread.nroles when it began: roles from max(rmark, max_objects)
                       * on are its own (beyond the enclosing invocations' max_objects),
                       * released when it ends (cf_core.c, cf_release_own) */
    uint32_t start[CF_MAX_TYPES];
    cf_sum *sum[CF_MAX_TYPES];
} cf_frame;

/* Per-thread invocation state.  The head (active .. neg_seq) is what the per-access path
 * reads, also from instrumented code (runtime/inline/cf_sancov_inline.c declares the same
 * head: keep the offsets asserted below in step with it).
 *
 * The "fast role" is the role resolved last (or, at the start of an invocation, the
 * previous invocation's role 0, "armed" by __cachefit_enter); the "second fast role"
 * (fbase2, fsize2, ftag2) the one resolved before it, if of the same type (cf_set_last).
 * While the fast role is attached (fpos != NULL), fpos is the next free quad of its
 * type's sequence and len[ftype] is stale; code that reads or appends through len[]
 * detaches it first (cf_fast_detach) and attaches it again afterwards (cf_fast_attach).
 * Detached, fpos == fend == NULL, so the inlined fast path falls through to the
 * out-of-line call for both fast roles. */
typedef struct cf_thread {
    int active;
    int depth;
    uintptr_t fbase;
    uintptr_t fsize;   /* 0: none */
    unsigned long fseq; /* registry version the fast role was confirmed at */
    uint64_t *fpos;
    uint64_t *fend;    /* slice + cap[ftype] */
    uint64_t ftag;
    /* The second fast role: the fast role before the last one resolved, when it is a role
     * of this invocation of the same type and confirmed at the same registry version (fseq);
     * it appends through the same fpos/fend.  fsize2 == 0: none.  Two objects touched in
     * turn (a sender and a receiver) both stay on the inlined path. */
    uintptr_t fbase2;
    uintptr_t fsize2;
    uint64_t ftag2;
    /* 256-byte granules known to hold no object, each valid while the registry version is
     * unchanged (most recent first; the out-of-line path checks the first two; the inlined
     * one, which reads the shadow instead, only keeps their place in the head). */
    uintptr_t neg_gran[CF_NEG_CACHE];
    unsigned long neg_seq[CF_NEG_CACHE];
    /* Counting mode (issue 26; cf_core.c, cf_count_*): while the outermost invocation is
     * alone (no nested one) and already a summary of the fast role's type, and the fast
     * role is the thread's counted role, an access of 1, 2, 4, 8 or 16 bytes inside it
     * counts one at fcnt[CF_CNT_INDEX(offset, size, mode)] instead of appending a quad.
     * A counter holds minus its count (0: none), so that the inlined check counts with one
     * subtraction whose borrow is the first count (cf_sancov_inline.c).  The first one to
     * a counter is taken by the runtime, which files the quad in the summary (in order of
     * first occurrence) and sets the counter to -1 (one).  The counters are added to the
     * summary's hits when the invocation ends.  NULL: not counting (then fend is as
     * usual); counting, fend is at fpos (no room). */
    uint64_t *fcnt;
    /* The other type's role (issue 31): a role of this invocation of another type than the
     * fast role's, confirmed at fseq, that cf_access_inside last took an access to through
     * the first roles (an interpreter's loop touching its state and the current frame in
     * turn).  fpos3 is the next free quad of its type's sequence (len[ftype3] is stale),
     * like fpos; attached only while the fast role is, and detached with it
     * (cf_fast_detach), so every path that detaches the fast role finds len[] exact.
     * fsize3 == 0: none. */
    uintptr_t fbase3;
    uintptr_t fsize3;
    uint64_t ftag3;
    uint64_t *fpos3;
    uint64_t *fend3;
    uint64_t *fslice3;
    uint32_t ftype3;
    /* Touched only for accesses inside registered ranges. */
    uint64_t *fslice;
    uint32_t ftype;
    uint32_t armed;    /* 1: roles[0] was armed at the start and may not be touched yet;
                        * 2: roles[0] and roles[1] were (tags 0 and 1, either may come first
                        * or not at all: cf_settle_armed numbers them by first touch) */
    uint32_t rearmed;  /* between invocations: __cachefit_leave left roles[0] (and roles[1]) armed */
    uint32_t alt;      /* the last invocation armed with two roles began with the object
                        * that was role 1 of the invocation before it (the two take turns) */
    uint32_t armswap;  /* armed == 2 with the previous invocation's roles 0 and 1 swapped */
    uint32_t noarm;    /* invocations left that cf_begin does not arm (after a disarm) */
    int entry;
    int ready;
    uintptr_t frame;
    uint32_t nroles;
    uint32_t rolesmax; /* roles[nroles .. rolesmax): objects of earlier invocations */
    /* Gaps between registered objects, by granule (CF_GRAN_SHIFT), direct-mapped
     * (cf_core.c, cf_resolve): [CF_NEGC], in the thread's mapping.  An interpreter's heap
     * interleaves traced objects with others, so most accesses between the lowest and the
     * highest object are to no object, often in a granule that holds one. */
    cf_negc *negc;
    /* Objects left out by max_objects at the outermost level, by 256-byte granule of an
     * address in them (cf_core.c, cf_cut_*): [CF_CUT0], in the thread's mapping; kept
     * while nested invocations run, as the outermost one gains no roles any more. */
    cf_cut0 *cut0;
    unsigned long cut0_gen;
    /* Across invocations: objects resolved recently, each valid while the registry
     * version is unchanged. */
    cf_role objcache[CF_OBJ_CACHE];
    uint32_t objcache_next;
    uint32_t objcache_last; /* the entry resolved last */
    uint64_t touched;
    cf_role *roles;
    uint64_t *buf; /* CF_MAX_TYPES slices of 2 * cf_max_accesses quads */
    uint32_t len[CF_MAX_TYPES];
    uint32_t nrole[CF_MAX_TYPES];
    uint32_t outside[CF_MAX_TYPES]; /* accesses in padding | CF_OUT_LONG | CF_OUT_OBJCUT */
    uint32_t cap[CF_MAX_TYPES]; /* max_accesses, 2 * max_accesses once longer (CF_OUT_LONG) */
    /* Nested invocations: frames[0 .. nest] are active while depth > 0 (cf_core.c). */
    uint32_t nest;
    /* Sequences of invocations nested in the outermost one, counted for it instead of
     * folded quad by quad (cf_core.c, cf_defer_*); the generation changes when the
     * outermost invocation ends. */
    cf_defer defer[CF_DEFER];
    uint64_t defer_gen;
    cf_frame *frames;   /* CF_MAX_FRAMES */
    uint64_t *scratch;  /* max_accesses quads: an inner invocation's renumbered sequence */
    /* Counting mode (fcnt above): the counters (10 * CF_CNT_MAX, mapped at first use), and
     * the counted role of the outermost invocation: its type (-1: none yet), tag and size. */
    uint64_t *cnt;
    int cnt_type;
    uint64_t cnt_tag;
    uintptr_t cnt_size;
    uint16_t *rmap;     /* 0x8000 entries, all 0 between uses: role -> renumbered role + 1 */
    cf_sum *sum_free;   /* summaries of ended invocations, for reuse */
    /* Invocation counters not yet added to the process totals (cf_publish), so that an
     * invocation's end costs one atomic add (its sequence's count), not four. */
    uint32_t pend_n;
    uint64_t pend_recorded;
    uint64_t pend_emask;
    uint32_t pend_entry[CF_MAX_ENTRIES];
    /* Objects' base addresses modulo the line, per type (CF_ALIGN_LINE counters a type, in
     * the thread's mapping): each invocation counts each object it touched once; added to
     * the process totals with the counters above (stat `align`). */
    uint32_t *align;
    /* Sequences this thread counted recently, per type, direct-mapped by length and last
     * quad (cf_core.c), and the invocations counted through each slot not yet added to the
     * sequence's count (added by cf_publish, and when the slot's entry leaves the pair). */
    struct cf_seq *recent[CF_MAX_TYPES][CF_RECENT];
    uint64_t rpend[CF_MAX_TYPES][CF_RECENT];
    /* Objects the max_objects guard left out at the current nesting level of the current
     * invocation (cf_core.c, cf_cut_*): [cut_base, cut_base + cut_size) at registry
     * version cut_seq; cut_n entries valid, emptied whenever the nesting level changes. */
    uint32_t cut_n;
    uint32_t cut_next;
    uintptr_t cut_base[CF_CUT_CACHE];
    uintptr_t cut_size[CF_CUT_CACHE];
    unsigned long cut_seq[CF_CUT_CACHE];
    /* Sharing between threads (issue 30, cf_share.c): 1 + the thread's number (threads
     * numbered in the order they begin their first invocation), 0: none yet; the types
     * whose objects it touched while sharing was tracked. */
    uint32_t thread_no;
    uint64_t share_types;
} cf_thread;

/* Exported under __cachefit_* names, default visibility: the inlined checks
 * (runtime/inline/cf_sancov_inline.c) read them from instrumented code, which may be
 * in a shared library. */
extern CF_TLS cf_thread cf_self __asm__("__cachefit_thread");
extern uintptr_t cf_lo __asm__("__cachefit_lo");
extern uintptr_t cf_span __asm__("__cachefit_span");
extern unsigned long cf_regseq __asm__("__cachefit_regseq");
/* The kill version (cf_core.c): what lookups found (the fast roles, roles, caches of
 * objects) is valid while it is unchanged. */
extern unsigned long cf_killseq __asm__("__cachefit_killseq");
/* The shadow of the registry (cf_core.c): byte a >> CF_SHADOW_SHIFT is 0 when no object
 * meets a's 16-byte granule, so an access starting at a is recorded nowhere; NULL: none. */
extern unsigned char *cf_shadow __asm__("__cachefit_shadow");
#define CF_SHADOW_SHIFT 4
_Static_assert(offsetof(cf_thread, active) == 0, "cf_sancov_inline.c: active at 0");
_Static_assert(offsetof(cf_thread, fbase) == 8, "cf_sancov_inline.c: fbase at 8");
_Static_assert(offsetof(cf_thread, fsize) == 16, "cf_sancov_inline.c: fsize at 16");
_Static_assert(offsetof(cf_thread, fseq) == 24, "cf_sancov_inline.c: fseq at 24");
_Static_assert(offsetof(cf_thread, fpos) == 32, "cf_sancov_inline.c: fpos at 32");
_Static_assert(offsetof(cf_thread, fend) == 40, "cf_sancov_inline.c: fend at 40");
_Static_assert(offsetof(cf_thread, ftag) == 48, "cf_sancov_inline.c: ftag at 48");
_Static_assert(offsetof(cf_thread, fbase2) == 56, "cf_sancov_inline.c: fbase2 at 56");
_Static_assert(offsetof(cf_thread, fsize2) == 64, "cf_sancov_inline.c: fsize2 at 64");
_Static_assert(offsetof(cf_thread, ftag2) == 72, "cf_sancov_inline.c: ftag2 at 72");
_Static_assert(offsetof(cf_thread, neg_gran) == 80, "cf_sancov_inline.c: neg_gran at 80");
_Static_assert(offsetof(cf_thread, neg_seq) == 112, "cf_sancov_inline.c: neg_seq at 112");
_Static_assert(offsetof(cf_thread, fcnt) == 144, "cf_sancov_inline.c: fcnt at 144");
_Static_assert(offsetof(cf_thread, fbase3) == 152, "cf_sancov_inline.c: fbase3 at 152");
_Static_assert(offsetof(cf_thread, fsize3) == 160, "cf_sancov_inline.c: fsize3 at 160");
_Static_assert(offsetof(cf_thread, ftag3) == 168, "cf_sancov_inline.c: ftag3 at 168");
_Static_assert(offsetof(cf_thread, fpos3) == 176, "cf_sancov_inline.c: fpos3 at 176");
_Static_assert(offsetof(cf_thread, fend3) == 184, "cf_sancov_inline.c: fend3 at 184");
_Static_assert(CF_NEG_CACHE == 4 && CF_GRAN_SHIFT == 8,
               "cf_sancov_inline.c: 4 granules of 256 bytes");
extern uint32_t cf_max_accesses CF_HIDDEN;

/* A summary's distinct quads so far (cf_core.c), in no particular order: i < cf_sum_len(s). */
uint32_t cf_sum_len(const cf_sum *s) CF_HIDDEN;
uint64_t cf_sum_quad(const cf_sum *s, uint32_t i) CF_HIDDEN;

/* Sharing between threads (issue 30, cf_share.c).  cf_share_on is set once a second thread
 * has begun an invocation; from then on cf_flush calls cf_share_end at the end of every
 * outermost invocation (after armed roles are settled, before the buffers are counted). */
extern uint32_t cf_share_on CF_HIDDEN;
void cf_share_thread(cf_thread *t) CF_HIDDEN;    /* a thread's first invocation */
void cf_share_end(cf_thread *t) CF_HIDDEN;
void cf_share_fork_child(cf_thread *self) CF_HIDDEN;
/* The `threads`, `share`, `shobj` and `handoff` lines of the raw trace (nothing unless
 * sharing was tracked), through put(arg, bytes, length). */
void cf_share_dump(int ntypes, void (*put)(void *, const char *, size_t), void *arg) CF_HIDDEN;

void cf_record_slow(uintptr_t a, uint64_t sm) CF_HIDDEN;
void cf_record_range(uintptr_t a, uintptr_t n, unsigned mode) CF_HIDDEN;
void __cachefit_access(const volatile void *p, uint64_t sm) __attribute__((cold));
void __cachefit_count_first(const volatile void *p, uint64_t sm) __attribute__((cold));

/* Write the other type's role's position back into len[] and detach it. */
static inline __attribute__((always_inline)) void cf_other_detach(cf_thread *t)
{
    if (t->fpos3) {
        t->len[t->ftype3] = (uint32_t)(t->fpos3 - t->fslice3);
        t->fpos3 = NULL;
        t->fend3 = NULL;
        t->fsize3 = 0;
    }
}

/* Write the fast role's position (and the other type's role's) back into len[] and
 * detach them. */
static inline __attribute__((always_inline)) void cf_fast_detach(cf_thread *t)
{
    cf_other_detach(t);
    if (t->fpos) {
        t->len[t->ftype] = (uint32_t)(t->fpos - t->fslice);
        t->fpos = NULL;
        t->fend = NULL;
    }
}

/* Counting mode's counter of an access of `size` bytes (1, 2, 4, 8 or 16: class
 * log2(size)) at offset `off` of the counted role, and the largest role it counts: ten
 * arrays of CF_CNT_MAX counters, one per size class and mode, so that the inlined check
 * finds a counter as one scaled index (off) and a constant displacement
 * (cf_sancov_inline.c). */
#define CF_CNT_INDEX(off, size, mode)                                                       \
    (((uintptr_t)__builtin_ctz(size) * 2 + (mode)) * CF_CNT_MAX + (off))
enum { CF_CNT_MAX = 65536 };
_Static_assert(CF_CNT_MAX == 65536, "cf_sancov_inline.c: CF_CNT_MAX is 65536 there too");
static inline int cf_cnt_size(uint32_t size)
{
    return size <= 16 && (size & (size - 1)) == 0 && size;
}

uint64_t *cf_count_attach(cf_thread *t) CF_HIDDEN;

/* Attach the fast role (if any) again after len[]/cap[] may have changed.  When it is
 * already the counted role of this invocation (cnt_type and cnt_tag, set by
 * cf_count_attach only while counting mode may run), its counters are found here: the
 * common case of an outermost summary whose nested invocations come and go. */
static inline __attribute__((always_inline)) void cf_fast_attach(cf_thread *t)
{
    if (t->fsize) {
        t->fpos = t->fslice + t->len[t->ftype];
        t->fend = t->fslice + t->cap[t->ftype];
        uint64_t *cnt = NULL;
        if (CF_UNLIKELY(!t->nest && (t->frames[0].folded >> t->ftype & 1)))
            cnt = t->cnt_type == (int)t->ftype && t->cnt_tag == t->ftag &&
                          !__atomic_load_n(&cf_share_on, __ATOMIC_RELAXED)
                      ? t->cnt : cf_count_attach(t);
        t->fcnt = cnt;
        if (cnt)
            t->fend = t->fpos;
    }
}

/* Make role i the fast role; the caller has detached it and attaches it afterwards.  The
 * fast role it replaces becomes the second one if it has the same type and registry
 * version (it is then a role of this invocation: an armed role not touched yet was
 * dropped by cf_slow_begin), else there is no second one. */
static inline __attribute__((always_inline)) void cf_set_last(cf_thread *t, uint32_t i)
{
    const cf_role *r = &t->roles[i];
    if (!t->fsize || r->type != t->ftype || r->seq != t->fseq) {
        t->fsize2 = 0;
    } else if (r->base != t->fbase) {
        t->fbase2 = t->fbase;
        t->fsize2 = t->fsize;
        t->ftag2 = t->ftag;
    } /* else: already the fast role, confirmed at the same version; the second one stays */
    t->fbase = r->base;
    t->fsize = r->size;
    t->fseq = r->seq;
    t->ftag = r->tag;
    t->fslice = r->slice;
    t->ftype = r->type;
}

/* The size and mode bits of a quad (role << 48 | size << 32 | offset, write bit 63). */
#define CF_SM(size, mode) ((uint64_t)((size) & 0xffffu) << 32 | (uint64_t)((mode) & 1u) << 63)

/* Append one quad to the role's per-type sequence; the fast role is detached.  0 when the
 * type's buffer is full: the caller leaves it to cf_record_slow, which makes room
 * (cf_core.c) and makes no call here. */
static inline __attribute__((always_inline)) int cf_append(cf_thread *t, const cf_role *r,
                                                           uintptr_t a, uint64_t sm)
{
    uint32_t type = r->type;
    uint32_t len = t->len[type];
    if (CF_UNLIKELY(len >= t->cap[type]))
        return 0;
    r->slice[len] = (uint64_t)(uint32_t)(a - r->base) | sm | r->tag;
    t->len[type] = len + 1;
    return 1;
}

/* 1: a is in an object left out at registry version `now` (entries [0, cut_n) are the
 * ones written since the cache was emptied: cut_next counts from 0 then). */
static inline __attribute__((always_inline)) int cf_cut_find(const cf_thread *t, uintptr_t a,
                                                              unsigned long now)
{
    if (!t->nest && t->cut0) {
        const cf_cut0 *e = &t->cut0[(a >> CF_GRAN_SHIFT) % CF_CUT0];
        if (a - e->base < e->size && e->seq == now && e->gen == t->cut0_gen)
            return 1;
    }
    for (uint32_t i = 0; i < t->cut_n; i++)
        if (a - t->cut_base[i] < t->cut_size[i] && t->cut_seq[i] == now)
            return 1;
    return 0;
}

/* The first of the invocation's first CF_INLINE_ROLES roles that holds a, or NULL: the
 * roles the out-of-line path takes an access to without a lookup (when the registry has
 * not changed since the role was resolved). */
static inline __attribute__((always_inline)) const cf_role *cf_inline_role(const cf_thread *t,
                                                                          uintptr_t a)
{
    uint32_t n = t->nroles < CF_INLINE_ROLES ? t->nroles : CF_INLINE_ROLES;
    for (uint32_t i = 0; i < n; i++)
        if (a - t->roles[i].base < t->roles[i].size)
            return &t->roles[i];
    return NULL;
}

/* 1: a lies in a gap between objects that negc holds for registry version seq. */
static inline int cf_in_gap(const cf_thread *t, uintptr_t a, unsigned long seq)
{
    uintptr_t g = a >> CF_GRAN_SHIFT;
    const cf_negc *e = &t->negc[g % CF_NEGC];
    uint32_t off = (uint32_t)(a & (((uintptr_t)1 << CF_GRAN_SHIFT) - 1));
    return e->gran == g + 1 && e->seq == seq && off - e->lo < e->hi - e->lo;
}

/* An access inside [lowest, highest) of the registered objects while this thread is in
 * an invocation: the fast role (or its counter), the second fast role, an empty granule of
 * the shadow, the other type's role, an object left out (cf_cut_find), the first
 * few roles (if the registry has not changed since they were resolved; one of another
 * type than the fast role's becomes the other type's role), a gap known from an earlier
 * lookup; 0 when none of these applies and the caller must call cf_record_slow.  Makes no
 * call. */
static inline __attribute__((always_inline)) int cf_access_inside(cf_thread *t, uintptr_t a,
                                                                  uint64_t sm)
{
    unsigned long seq = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
    uintptr_t off = a - t->fbase;
    if (CF_LIKELY(off < t->fsize && t->fseq == seq)) {
        uint64_t *pos = t->fpos;
        if (CF_UNLIKELY(pos >= t->fend)) {
            uint32_t size = (uint32_t)(sm >> 32) & 0xffff;
            if (t->fcnt && cf_cnt_size(size)) { /* counting mode */
                uint64_t *c = &t->fcnt[CF_CNT_INDEX(off, size, (uint32_t)(sm >> 63))];
                if (CF_LIKELY(*c)) { /* minus the count (fcnt above) */
                    --*c;
                    return 1;
                }
            }
            return 0; /* full (or detached), or a first count: cf_record_slow */
        }
        *pos = off | sm | t->ftag;
        t->fpos = pos + 1;
        return 1;
    }
    off = a - t->fbase2;
    if (off < t->fsize2 && t->fseq == seq) {
        uint64_t *pos = t->fpos;
        if (CF_LIKELY(pos < t->fend)) {
            *pos = off | sm | t->ftag2;
            t->fpos = pos + 1;
            return 1;
        }
        if (pos)
            return 0; /* full: cf_record_slow makes room */
    }
    const unsigned char *sh = RD(cf_shadow);
    if (sh && !RD(sh[a >> CF_SHADOW_SHIFT]))
        return 1; /* between objects */
    off = a - t->fbase3;
    if (off < t->fsize3 && t->fseq == seq) {
        uint64_t *pos = t->fpos3;
        if (CF_LIKELY(pos < t->fend3)) {
            *pos = off | sm | t->ftag3;
            t->fpos3 = pos + 1;
            return 1;
        }
        return 0; /* full: cf_record_slow makes room */
    }
    /* An object left out by max_objects (an interpreter's main loop touching many). */
    if (cf_cut_find(t, a, seq))
        return 1;
    const cf_role *r = cf_inline_role(t, a);
    if (r && r->seq == seq) {
        /* Not made the fast role: with two objects accessed in turn (sender and
         * receiver) copying it back and forth costs more than this loop. */
        if (r->type == t->ftype && t->fpos) {
            uint64_t *pos = t->fpos;
            if (pos >= t->fend)
                return 0;
            *pos = (uint64_t)(uint32_t)(a - r->base) | sm | r->tag;
            t->fpos = pos + 1;
            return 1;
        }
        int attached = t->fpos3 && r->type == t->ftype3;
        if (attached || (t->fpos && r->seq == t->fseq)) {
            /* Another type's role: its type's position is fpos3 (attached now if it was
             * not, the previous other type's detached), and the role is the other type's
             * role, on the inlined path from the next access on, if confirmed at fseq. */
            if (!attached) {
                cf_other_detach(t);
                t->fslice3 = r->slice;
                t->ftype3 = r->type;
                t->fpos3 = r->slice + t->len[r->type];
                t->fend3 = r->slice + t->cap[r->type];
            }
            int inl = r->seq == t->fseq;
            t->fbase3 = r->base;
            t->fsize3 = inl ? r->size : 0;
            t->ftag3 = r->tag;
            uint64_t *pos = t->fpos3;
            if (pos >= t->fend3)
                return 0;
            *pos = (uint64_t)(uint32_t)(a - r->base) | sm | r->tag;
            t->fpos3 = pos + 1;
            return 1;
        }
        return cf_append(t, r, a, sm);
    }
    /* Between objects (e.g. the stack kept behind a TCB, an interpreter's other heap
     * blocks): a granule known to be empty. */
    uintptr_t g = (a >> CF_GRAN_SHIFT) + 1;
    unsigned long rseq = __atomic_load_n(&cf_regseq, __ATOMIC_ACQUIRE); /* gaps: negative */
    if ((t->neg_gran[0] == g && t->neg_seq[0] == rseq) ||
        (t->neg_gran[1] == g && t->neg_seq[1] == rseq))
        return 1;
    return CF_LIKELY(t->negc) && cf_in_gap(t, a, rseq);
}

/* The per-access path: thread-local "in invocation" flag, then one unsigned
 * compare against the [lowest, highest) address of all registered objects, then
 * cf_access_inside. */
static inline __attribute__((always_inline)) void cf_access(const volatile void *p, unsigned size,
                                                            unsigned mode)
{
    if (CF_LIKELY(!cf_self.active))
        return;
    uintptr_t a = (uintptr_t)p;
    if (CF_LIKELY(a - RD(cf_lo) >= RD(cf_span)))
        return;
    if (!cf_access_inside(&cf_self, a, CF_SM(size, mode)))
        cf_record_slow(a, CF_SM(size, mode));
}

/* Registry (cf_core.c). */
int cf_type_id(const char *name) CF_HIDDEN;
int cf_type_lookup(const char *name) CF_HIDDEN; /* -1: not a type (none is made) */
/* Field maps and summary footprints (cf_fields.c): a blob's `fields TYPE OFF:SIZE ...`
 * line after the type's name; whether a type has a map; a summary's footprint tokens. */
void cf_fields_load(int type, const char *s) CF_HIDDEN;
int cf_fields_known(uint32_t type) CF_HIDDEN;
uint32_t cf_fields_footprint(uint32_t type, const uint64_t *q, uint32_t n,
                             uint64_t *out) CF_HIDDEN;
/* The next space-separated word of a blob line into out (cf_core.c). */
const char *cf_parse_word(const char *s, char *out, size_t cap) CF_HIDDEN;
/* A blob's `global ADDR COUNT ELEM STRIDE TYPE ...` line after the word `global`: the
 * address as written (hex), the counts, the type's id; returns the rest of the line. */
typedef struct cf_blob_global {
    uintptr_t addr, count, elem, stride;
    int type;
} cf_blob_global;
const char *cf_parse_global(const char *s, cf_blob_global *g) CF_HIDDEN;
void cf_register(uintptr_t base, uintptr_t count, uintptr_t elem, uintptr_t stride, int type,
                 uint32_t flags) CF_HIDDEN;
int cf_forget(uintptr_t base, int type) CF_HIDDEN; /* type -1: every type */
/* Before a heap block is registered: forget the objects it makes stale (types: mask of
 * the type ids the block holds). */
void cf_forget_overlapping(uintptr_t base, uintptr_t len, uint64_t types) CF_HIDDEN;
void cf_forget_reused(uintptr_t base, uintptr_t len, uint64_t types) CF_HIDDEN;
int cf_is_registered(uintptr_t base) CF_HIDDEN;
int cf_on_own_stack(uintptr_t a) CF_HIDDEN;

/* Invocations (cf_core.c; __cachefit_enter/__cachefit_leave are what entry functions
 * call, cf_enter/cf_leave the same for the public API). */
int cf_enter(int entry, uintptr_t frame) CF_HIDDEN;
void cf_leave(void) CF_HIDDEN;
void cf_init(void) CF_HIDDEN;
void cf_dump_now(void) CF_HIDDEN;

#endif /* CF_INTERNAL_H */
