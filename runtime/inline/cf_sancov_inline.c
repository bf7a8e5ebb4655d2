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
 * What is inlined is only what rejects the common case: one unsigned compare of the
 * address against [lowest, highest) of every registered object, then the thread's
 * "inside an invocation" flag.  Everything else is __cachefit_access (cf_sancov.c).
 * The bounds are read with plain loads so the optimizer can keep them in registers
 * between accesses (the out-of-line call makes it reload them): an object registered
 * by another thread is seen from the next call or loop iteration that reloads them,
 * and a thread can only reach that object after synchronizing with the registering
 * thread, which is a call or an atomic operation.
 * This file must hold no state, must not be compiled into the runtime archive and
 * must agree with cf_internal.h on the names and layout it reads.
 */
#include <stdint.h>

/* The head of cf_thread (cf_internal.h): `active` is its first member. */
struct cf_thread_head {
    int active;
};

extern __thread struct cf_thread_head __cachefit_thread
    __attribute__((tls_model("initial-exec")));
extern uintptr_t __cachefit_lo;
extern uintptr_t __cachefit_span;
/* sm: size << 32 | write << 63, as CF_SM in cf_internal.h. */
__attribute__((cold)) void __cachefit_access(const volatile void *p, uint64_t sm);

/* A macro, not a static function: C99 inline definitions with external linkage may not
 * reference identifiers with internal linkage. */
#define CF_INLINE_CHECK(p, size, mode)                                                      \
    do {                                                                                    \
        uintptr_t a_ = (uintptr_t)(p);                                                      \
        if (__builtin_expect(a_ - __cachefit_lo >= __cachefit_span, 1))                     \
            return;                                                                         \
        if (__builtin_expect(!__cachefit_thread.active, 1))                                 \
            return;                                                                         \
        __cachefit_access((p), (uint64_t)(size) << 32 | (uint64_t)(mode) << 63);            \
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
