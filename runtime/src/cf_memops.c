/* cf_memops.c - memcpy, memmove and memset as seen by profile builds.
 *
 * Neither backend sees the loads and stores inside the C library's memcpy/memset, and
 * clang turns memcpy calls into an intrinsic that sanitizer coverage does not
 * instrument.  The compiler wrapper (cachefit.trace.unit_instrument) therefore
 * redirects calls of memcpy/memmove/memset and their __builtin_ forms in instrumented
 * functions to the functions below.  Inside an invocation each reports the bytes it
 * reads and writes (cf_record_range: one access per object element overlapped, of the
 * overlapped size; source before destination), then does the real operation.  Outside
 * an invocation they cost one thread-local load.  Nothing here allocates or locks.
 *
 * __cachefit_note_copy only records: the wrapper puts it before struct assignments and
 * copy-initialisations that clang lowers to llvm.memcpy after sanitizer coverage ran
 * (cachefit.trace.struct_copies), and the copy itself stays the compiler's.
 */
#include "cf_internal.h"

#include <string.h>

void *__cachefit_memcpy(void *d, const void *s, size_t n)
{
    if (CF_UNLIKELY(cf_self.active)) {
        cf_record_range((uintptr_t)s, n, CF_READ);
        cf_record_range((uintptr_t)d, n, CF_WRITE);
    }
    return memcpy(d, s, n);
}

void *__cachefit_memmove(void *d, const void *s, size_t n)
{
    if (CF_UNLIKELY(cf_self.active)) {
        cf_record_range((uintptr_t)s, n, CF_READ);
        cf_record_range((uintptr_t)d, n, CF_WRITE);
    }
    return memmove(d, s, n);
}

void *__cachefit_memset(void *d, int c, size_t n)
{
    if (CF_UNLIKELY(cf_self.active))
        cf_record_range((uintptr_t)d, n, CF_WRITE);
    return memset(d, c, n);
}

void __cachefit_note_copy(void *d, const void *s, size_t n)
{
    if (CF_UNLIKELY(cf_self.active)) {
        cf_record_range((uintptr_t)s, n, CF_READ);
        cf_record_range((uintptr_t)d, n, CF_WRITE);
    }
}
