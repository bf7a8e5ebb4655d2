/* cf_sancov_inline.c - the first checks of the per-access path, for inlining into
 * instrumented code.
 *
 * clang's sanitizer-coverage pass inserts a call of __sanitizer_cov_loadN/storeN
 * before each N-byte load or store.  The pass runs after the optimizer has inlined,
 * so those calls stay calls, and a call costs more than the check it makes.  A
 * profile build with clang therefore compiles each unit to bitcode first, then
 * compiles that bitcode again with this file linked in (-mlink-bitcode-file): the
 * definitions below are C99 inline definitions, i.e. `available_externally`, so the
 * optimizer inlines them and emits no symbol; the real callbacks stay in the runtime
 * archive (cf_sancov.c) for code compiled without this step.
 *
 * What is inlined is what handles the common cases.  First the fast role (the object the
 * thread touched last, or the one cf_enter armed): if the address falls inside it, the
 * registry version is the one it was confirmed at and its sequence has room, the quad is
 * stored and the position advanced here.  The runtime keeps the fast role without room
 * (fend at fpos, or both NULL) whenever the thread is not inside an invocation, so this
 * path needs no test of the thread's "inside an invocation" flag (that load, reloaded
 * after every store of the program that may alias an int, cost a third of zlib's traced
 * time).  Then one unsigned compare of the address against [lowest, highest) of every
 * registered object, the flag, the second fast role (the one touched before, when it is a
 * role of the same type: a sender and a receiver), the shadow's byte of the address's
 * 16-byte granule (0: no registered object meets it; cf_core.c) and the other type's role
 * (a role of another type, with its own position fpos3 in its type's sequence;
 * cf_internal.h).  Everything else is __cachefit_access (cf_sancov.c).
 * The quads are stored as `double` so that type-based alias analysis knows they change
 * none of the unsigned longs and pointers read here, and the thread's head is addressed
 * from one read of the thread pointer and of its offset (x86-64), which the optimizer
 * can keep across a function's checks.
 * A run of accesses through one base pointer (cf_coalesce, runtime/pass/) is one call of
 * __cachefit_run: one check of the run's extent against the fast role, then its quads.
 * This file must hold no state, must not be compiled into the runtime archive and
 * must agree with cf_internal.h on the names and layout it reads (the offsets of the
 * head of cf_thread are asserted on both sides).
 */
#include <stddef.h>
#include <stdint.h>

/* The head of cf_thread (cf_internal.h). */
struct cf_thread_head {
    int active;
    int depth;
    uintptr_t fbase;
    uintptr_t fsize;
    unsigned long fseq;
    uint64_t *fpos;
    uint64_t *fend;
    uint64_t ftag;
    uintptr_t fbase2;
    uintptr_t fsize2;
    uint64_t ftag2;
    uintptr_t neg_gran[4]; /* the runtime's; not read here */
    unsigned long neg_seq[4];
    uint64_t *fcnt;
    uintptr_t fbase3;
    uintptr_t fsize3;
    uint64_t ftag3;
    uint64_t *fpos3;
    uint64_t *fend3;
};
_Static_assert(offsetof(struct cf_thread_head, fbase) == 8, "cf_internal.h: fbase at 8");
_Static_assert(offsetof(struct cf_thread_head, fsize) == 16, "cf_internal.h: fsize at 16");
_Static_assert(offsetof(struct cf_thread_head, fseq) == 24, "cf_internal.h: fseq at 24");
_Static_assert(offsetof(struct cf_thread_head, fpos) == 32, "cf_internal.h: fpos at 32");
_Static_assert(offsetof(struct cf_thread_head, fend) == 40, "cf_internal.h: fend at 40");
_Static_assert(offsetof(struct cf_thread_head, ftag) == 48, "cf_internal.h: ftag at 48");
_Static_assert(offsetof(struct cf_thread_head, fbase2) == 56, "cf_internal.h: fbase2 at 56");
_Static_assert(offsetof(struct cf_thread_head, fsize2) == 64, "cf_internal.h: fsize2 at 64");
_Static_assert(offsetof(struct cf_thread_head, ftag2) == 72, "cf_internal.h: ftag2 at 72");
_Static_assert(offsetof(struct cf_thread_head, neg_gran) == 80, "cf_internal.h: neg_gran at 80");
_Static_assert(offsetof(struct cf_thread_head, neg_seq) == 112, "cf_internal.h: neg_seq at 112");
_Static_assert(offsetof(struct cf_thread_head, fcnt) == 144, "cf_internal.h: fcnt at 144");
_Static_assert(offsetof(struct cf_thread_head, fbase3) == 152, "cf_internal.h: fbase3 at 152");
_Static_assert(offsetof(struct cf_thread_head, fsize3) == 160, "cf_internal.h: fsize3 at 160");
_Static_assert(offsetof(struct cf_thread_head, ftag3) == 168, "cf_internal.h: ftag3 at 168");
_Static_assert(offsetof(struct cf_thread_head, fpos3) == 176, "cf_internal.h: fpos3 at 176");
_Static_assert(offsetof(struct cf_thread_head, fend3) == 184, "cf_internal.h: fend3 at 184");

extern __thread struct cf_thread_head __cachefit_thread
    __attribute__((tls_model("initial-exec")));
extern uintptr_t __cachefit_lo;
extern uintptr_t __cachefit_span;
/* The kill version (cf_core.c): the fast roles are valid while it is the one they were
 * confirmed at (fseq). */
extern unsigned long __cachefit_killseq;
/* Byte a >> 4: 0 when no registered object meets a's 16-byte granule (cf_core.c). */
extern unsigned char *__cachefit_shadow;
/* sm: size << 32 | write << 63, as CF_SM in cf_internal.h.  On x86-64 the call goes to
 * __cachefit_access_pm (cf_sancov.c), which preserves every general register but r11
 * (clang's preserve_most): the instrumented code keeps its values in registers around
 * the rarely taken call instead of moving them to callee-saved ones first.  Not from
 * code built for a shared library (-fPIC without -fPIE): there the call goes through
 * the PLT, whose lazy binding need not preserve those registers. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__clang__) &&                        \
    (!defined(__PIC__) || defined(__PIE__))
__attribute__((cold, preserve_most)) void __cachefit_access_pm(const volatile void *p,
                                                                uint64_t sm);
__attribute__((cold, preserve_most)) void __cachefit_count_first_pm(const volatile void *p,
                                                                     uint64_t sm);
#define CF_ACCESS_CALL __cachefit_access_pm
#define CF_COUNT_FIRST_CALL __cachefit_count_first_pm
#else
__attribute__((cold)) void __cachefit_access(const volatile void *p, uint64_t sm);
__attribute__((cold)) void __cachefit_count_first(const volatile void *p, uint64_t sm);
#define CF_ACCESS_CALL __cachefit_access
#define CF_COUNT_FIRST_CALL __cachefit_count_first
#endif

/* The head of the calling thread's cf_thread.  On x86-64 ELF: the thread pointer plus the
 * initial-exec offset of __cachefit_thread, read by two asm statements without side
 * effects so that the optimizer computes them once per function instead of once per
 * access (as it does for a thread-local's address in every block). */
#if defined(__x86_64__) && defined(__ELF__)
#define CF_THREAD()                                                                         \
    __extension__({                                                                         \
        uintptr_t tp_, toff_;                                                               \
        __asm__("movq %%fs:0, %0" : "=r"(tp_));                                             \
        __asm__("movq __cachefit_thread@gottpoff(%%rip), %0" : "=r"(toff_));                \
        (struct cf_thread_head *)(tp_ + toff_);                                             \
    })
#else
#define CF_THREAD() (&__cachefit_thread)
#endif

/* Store quad v at pos, typed as a double (see the top of the file). */
#define CF_PUT_QUAD(pos, v)                                                                 \
    do {                                                                                    \
        uint64_t v_ = (v);                                                                  \
        double d_;                                                                          \
        __builtin_memcpy(&d_, &v_, sizeof d_);                                              \
        *(double *)(pos) = d_;                                                              \
    } while (0)

/* Counting mode's counter of an access (as in cf_internal.h): ten arrays of CF_CNT_MAX
 * counters, one per size class and mode, indexed by the offset in the counted role. */
#define CF_CNT_MAX 65536
#define CF_CNT_INDEX(off, size, mode)                                                       \
    (((intptr_t)__builtin_ctz(size) * 2 + (intptr_t)(mode)) * CF_CNT_MAX + (intptr_t)(off))

/* Count one more access at the counter at c (counting mode), typed as a double like the
 * quads.  A counter holds minus its count (cf_internal.h), so the count is one subtraction
 * in memory (x86-64: `subq $1, mem`), which borrows only when the counter was 0: a first
 * count, which the runtime gives back and takes as before (__cachefit_count_first,
 * __cachefit_run_first: cf_sancov.c).  Evaluates to the borrow. */
#define CF_COUNT(c)                                                                         \
    __extension__({                                                                         \
        double d_ = *(double *)(c);                                                         \
        uint64_t v_, r_;                                                                    \
        __builtin_memcpy(&v_, &d_, sizeof v_);                                              \
        int b_ = __builtin_sub_overflow(v_, (uint64_t)1, &r_);                              \
        __builtin_memcpy(&d_, &r_, sizeof d_);                                              \
        *(double *)(c) = d_;                                                                \
        b_;                                                                                 \
    })

/* A macro, not a static function: C99 inline definitions with external linkage may not
 * reference identifiers with internal linkage.  The quad is offset | sm | role << 48, as
 * cf_access_inside stores it.  In counting mode (fcnt, cf_internal.h: fend is at fpos) the
 * fast role's access counts one at its counter, CF_CNT_INDEX. */
#define CF_INLINE_CHECK(p, size, mode)                                                      \
    do {                                                                                    \
        uintptr_t a_ = (uintptr_t)(p);                                                      \
        struct cf_thread_head *th_ = CF_THREAD();                                           \
        uint64_t sm_ = (uint64_t)(size) << 32 | (uint64_t)(mode) << 63;                     \
        uintptr_t off_ = a_ - th_->fbase;                                                   \
        if (off_ < th_->fsize) {                                                            \
            uint64_t *pos_ = th_->fpos;                                                     \
            if (__builtin_expect(th_->fseq == __cachefit_killseq, 1) &&                     \
                __builtin_expect(pos_ < th_->fend, 1)) {                                    \
                CF_PUT_QUAD(pos_, off_ | sm_ | th_->ftag);                                  \
                th_->fpos = pos_ + 1;                                                       \
                return;                                                                     \
            }                                                                               \
            uint64_t *c_ = th_->fcnt;                                                       \
            if (c_ && th_->fseq == __cachefit_killseq) {                                    \
                if (__builtin_expect(                                                       \
                        !CF_COUNT(c_ + CF_CNT_INDEX(off_, size, mode)), 1))                 \
                    return;                                                                 \
                CF_COUNT_FIRST_CALL((p), sm_);                                              \
                return;                                                                     \
            }                                                                               \
        }                                                                                   \
        if (__builtin_expect(a_ - __cachefit_lo >= __cachefit_span, 1))                     \
            return;                                                                         \
        if (__builtin_expect(!th_->active, 1))                                              \
            return;                                                                         \
        if (off_ >= th_->fsize) {                                                           \
            uint64_t *pos_ = th_->fpos;                                                     \
            uintptr_t off2_ = a_ - th_->fbase2;                                             \
            if (off2_ < th_->fsize2 &&                                                      \
                __builtin_expect(th_->fseq == __cachefit_killseq, 1) &&                     \
                __builtin_expect(pos_ < th_->fend, 1)) {                                    \
                CF_PUT_QUAD(pos_, off2_ | sm_ | th_->ftag2);                                \
                th_->fpos = pos_ + 1;                                                       \
                return;                                                                     \
            }                                                                               \
            /* Between objects: the shadow's granule is empty. */                           \
            const unsigned char *sh_ = __cachefit_shadow;                                   \
            if (sh_ && !sh_[a_ >> 4])                                                       \
                return;                                                                     \
            /* The other type's role: its own position. */                                  \
            uintptr_t off3_ = a_ - th_->fbase3;                                             \
            uint64_t *pos3_ = th_->fpos3;                                                   \
            if (off3_ < th_->fsize3 &&                                                      \
                __builtin_expect(th_->fseq == __cachefit_killseq, 1) &&                     \
                __builtin_expect(pos3_ < th_->fend3, 1)) {                                  \
                CF_PUT_QUAD(pos3_, off3_ | sm_ | th_->ftag3);                               \
                th_->fpos3 = pos3_ + 1;                                                     \
                return;                                                                     \
            }                                                                               \
        }                                                                                   \
        CF_ACCESS_CALL((p), sm_);                                                           \
    } while (0)

#define CF_SANCOV_INLINE(n)                                                                 \
    inline __attribute__((always_inline)) void __sanitizer_cov_load##n(                     \
        const volatile void *p)                                                             \
    {                                                                                       \
        CF_INLINE_CHECK(p, n, 0);                                                           \
    }                                                                                       \
    inline __attribute__((always_inline)) void __sanitizer_cov_store##n(                    \
        const volatile void *p)                                                             \
    {                                                                                       \
        CF_INLINE_CHECK(p, n, 1);                                                           \
    }

CF_SANCOV_INLINE(1)
CF_SANCOV_INLINE(2)
CF_SANCOV_INLINE(4)
CF_SANCOV_INLINE(8)
CF_SANCOV_INLINE(16)

/* A run of n accesses through one base pointer, in program order (the cf_coalesce pass,
 * runtime/pass/cf_coalesce.cpp, makes the descriptor; keep the two in sync): member[i] =
 * offset from the base (int32, low 32 bits) | size << 32 | store << 63; every member lies
 * in [base + lo, base + hi).  When the whole extent is inside the fast role, the run is one
 * check and n stores of exactly the quads the n accesses would have stored one by one;
 * else, unless the extent misses every registered object, __cachefit_run_slow (cf_sancov.c)
 * takes the members one by one. */
struct cf_run_desc {
    uint32_t n;
    int32_t lo;
    int32_t hi;
    uint32_t zero;
    uint64_t member[];
};
_Static_assert(offsetof(struct cf_run_desc, member) == 16, "cf_coalesce.cpp: member at 16");
__attribute__((cold)) void __cachefit_run_slow(const volatile void *base,
                                               const struct cf_run_desc *d);
__attribute__((cold)) void __cachefit_run_first(const volatile void *base,
                                                const struct cf_run_desc *d);

inline __attribute__((always_inline)) void __cachefit_run(const volatile void *base,
                                                          const struct cf_run_desc *d)
{
    uintptr_t a = (uintptr_t)base;
    struct cf_thread_head *th = CF_THREAD();
    uintptr_t off = a - th->fbase;
    uint64_t *pos = th->fpos;
    uint32_t n = d->n;
    if (off + (uintptr_t)(intptr_t)d->lo < th->fsize &&
        off + (uintptr_t)(intptr_t)d->hi <= th->fsize &&
        __builtin_expect(th->fseq == __cachefit_killseq, 1)) {
        if (__builtin_expect(
                (uintptr_t)th->fend - (uintptr_t)pos >= (uintptr_t)n * sizeof *pos, 1)) {
            uint64_t tag = th->ftag;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t m = d->member[i];
                uint64_t o = (off + (uintptr_t)(intptr_t)(int32_t)(uint32_t)m) & 0xffffffffu;
                CF_PUT_QUAD(pos + i, o | (m & ~(uint64_t)0xffffffffu) | tag);
            }
            th->fpos = pos + n;
            return;
        }
        uint64_t *c = th->fcnt;
        if (c) {
            /* Counting mode: one count at each member's counter; when one of them is a first
             * count, the runtime gives them all back and takes the members one by one. */
            c += off;
            int first = 0;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t m = d->member[i];
                first |= CF_COUNT(c + CF_CNT_INDEX((intptr_t)(int32_t)(uint32_t)m,
                                                   (uint32_t)(m >> 32) & 0xffff, m >> 63));
            }
            if (__builtin_expect(first, 0))
                __cachefit_run_first(base, d);
            return;
        }
    }
    uintptr_t s = a + (uintptr_t)(intptr_t)d->lo, e = a + (uintptr_t)(intptr_t)d->hi;
    if (__builtin_expect(s >= __cachefit_lo + __cachefit_span || e <= __cachefit_lo, 1))
        return;
    if (__builtin_expect(!th->active, 1))
        return;
    __cachefit_run_slow(base, d);
}

/* Taking the addresses makes clang emit the inline definitions into the bitcode (it emits
 * unreferenced ones nowhere); -mlink-bitcode-file links only what a unit needs, so this
 * table itself never reaches an object file. */
__attribute__((used)) static void (*const cf_inline_refs[])(const volatile void *) = {
    __sanitizer_cov_load1,  __sanitizer_cov_store1,  __sanitizer_cov_load2,
    __sanitizer_cov_store2, __sanitizer_cov_load4,   __sanitizer_cov_store4,
    __sanitizer_cov_load8,  __sanitizer_cov_store8,  __sanitizer_cov_load16,
    __sanitizer_cov_store16,
};
__attribute__((used)) static void (*const cf_inline_run_ref)(const volatile void *,
                                                              const struct cf_run_desc *) =
    __cachefit_run;
