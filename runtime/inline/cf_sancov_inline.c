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
 * What is inlined is what handles the common cases: one unsigned compare of the address
 * against [lowest, highest) of every registered object, the thread's "inside an
 * invocation" flag, and the two fast roles (the object the thread touched last, or the one
 * cf_enter armed, and the one touched before it when it is a role of the same type): if
 * the address falls inside one of them, the registry version is the one it was
 * confirmed at and its sequence has room, the quad is stored and the position advanced
 * here; an address outside both in one of the two 256-byte granules the runtime last
 * found empty (at the current registry version) is ignored here.  Everything else is __cachefit_access (cf_sancov.c).
 * The bounds and the registry version are read with plain loads so the optimizer can
 * keep them in registers between accesses (the out-of-line call makes it reload them):
 * an object registered or freed by another thread is seen from the next call or loop
 * iteration that reloads them, and a thread can only reach that object (or its reuse)
 * after synchronizing with the registering thread, which is a call or an atomic
 * operation.
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
    uintptr_t neg_gran[4];
    unsigned long neg_seq[4];
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

extern __thread struct cf_thread_head __cachefit_thread
    __attribute__((tls_model("initial-exec")));
extern uintptr_t __cachefit_lo;
extern uintptr_t __cachefit_span;
extern unsigned long __cachefit_regseq;
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
#define CF_ACCESS_CALL __cachefit_access_pm
#else
__attribute__((cold)) void __cachefit_access(const volatile void *p, uint64_t sm);
#define CF_ACCESS_CALL __cachefit_access
#endif

/* A macro, not a static function: C99 inline definitions with external linkage may not
 * reference identifiers with internal linkage.  The quad is offset | sm | role << 48, as
 * cf_access_inside stores it. */
#define CF_INLINE_CHECK(p, size, mode)                                                      \
    do {                                                                                    \
        uintptr_t a_ = (uintptr_t)(p);                                                      \
        if (__builtin_expect(a_ - __cachefit_lo >= __cachefit_span, 1))                     \
            return;                                                                         \
        if (__builtin_expect(!__cachefit_thread.active, 1))                                 \
            return;                                                                         \
        uint64_t sm_ = (uint64_t)(size) << 32 | (uint64_t)(mode) << 63;                     \
        uintptr_t off_ = a_ - __cachefit_thread.fbase;                                      \
        uint64_t *pos_ = __cachefit_thread.fpos;                                            \
        if (__builtin_expect(off_ < __cachefit_thread.fsize, 1)) {                          \
            if (__builtin_expect(__cachefit_thread.fseq == __cachefit_regseq, 1) &&         \
                __builtin_expect(pos_ < __cachefit_thread.fend, 1)) {                       \
                *pos_ = off_ | sm_ | __cachefit_thread.ftag;                                \
                __cachefit_thread.fpos = pos_ + 1;                                          \
                return;                                                                     \
            }                                                                               \
        } else {                                                                            \
            uintptr_t off2_ = a_ - __cachefit_thread.fbase2;                                \
            if (off2_ < __cachefit_thread.fsize2 &&                                         \
                __builtin_expect(__cachefit_thread.fseq == __cachefit_regseq, 1) &&         \
                __builtin_expect(pos_ < __cachefit_thread.fend, 1)) {                       \
                *pos_ = off2_ | sm_ | __cachefit_thread.ftag2;                               \
                __cachefit_thread.fpos = pos_ + 1;                                          \
                return;                                                                     \
            }                                                                               \
            /* Between objects (a stack kept behind a TCB): a granule known empty. */       \
            uintptr_t g_ = (a_ >> 8) + 1;                                                   \
            if ((__cachefit_thread.neg_gran[0] == g_ &&                                     \
                 __cachefit_thread.neg_seq[0] == __cachefit_regseq) ||                      \
                (__cachefit_thread.neg_gran[1] == g_ &&                                     \
                 __cachefit_thread.neg_seq[1] == __cachefit_regseq))                        \
                return;                                                                     \
        }                                                                                   \
        CF_ACCESS_CALL((p), sm_);                                                        \
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

/* Taking the addresses makes clang emit the inline definitions into the bitcode (it emits
 * unreferenced ones nowhere); -mlink-bitcode-file links only what a unit needs, so this
 * table itself never reaches an object file. */
__attribute__((used)) static void (*const cf_inline_refs[])(const volatile void *) = {
    __sanitizer_cov_load1,  __sanitizer_cov_store1,  __sanitizer_cov_load2,
    __sanitizer_cov_store2, __sanitizer_cov_load4,   __sanitizer_cov_store4,
    __sanitizer_cov_load8,  __sanitizer_cov_store8,  __sanitizer_cov_load16,
    __sanitizer_cov_store16,
};
