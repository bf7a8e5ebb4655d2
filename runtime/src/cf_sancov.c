/* cf_sancov.c - callbacks of clang's -fsanitize-coverage=trace-loads,trace-stores.
 *
 * clang calls __sanitizer_cov_loadN / __sanitizer_cov_storeN with the address just
 * before each N-byte load or store of an instrumented function.  Each callback is
 * the per-access path (cf_access): no allocation, no locks.  The access itself is
 * still done by the program, so atomics stay atomic.
 */
#include "cf_internal.h"

#define CF_SANCOV(n)                                                                       \
    void __sanitizer_cov_load##n(const volatile void *p) { cf_access(p, n, CF_READ); }     \
    void __sanitizer_cov_store##n(const volatile void *p) { cf_access(p, n, CF_WRITE); }

/* Called by the inlined first checks (runtime/inline/cf_sancov_inline.c), its only
 * caller, which has already checked the thread's "inside an invocation" flag, for an
 * access inside [lowest, highest) of the registered objects (the range the caller
 * checked may be stale; cf_access_inside resolves the address anyway).
 * `sm` is CF_SM(size, mode), a constant at each call site. */
void __cachefit_access(const volatile void *p, uint64_t sm)
{
    cf_access_inside(&cf_self, (uintptr_t)p, sm);
}

CF_SANCOV(1)
CF_SANCOV(2)
CF_SANCOV(4)
CF_SANCOV(8)
CF_SANCOV(16)
