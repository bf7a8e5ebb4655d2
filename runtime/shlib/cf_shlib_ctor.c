/* cf_shlib_ctor.c - linked into every shared library a profile build links (`-shared`).
 *
 * Defines the library's own blob, __cachefit_shlib_blob (hidden, so each library keeps
 * its own and none interposes the executable's __cachefit_blob), which the link step
 * fills after linking with the library's static objects of the traced types (see
 * docs/raw-trace-format.md), and a constructor and destructor that hand it to the
 * executable's runtime (runtime/src/cf_shlib.c): registered at load, dlopen included,
 * forgotten at unload.  The runtime's entry points are weak: in a process without the
 * runtime they are null and nothing is done.
 *
 * The wrapper compiles this file with -DCF_BLOB_CAPACITY=N.  It must stay tiny and must
 * not define any symbol with default visibility: the library's exports stay as they were.
 */
#ifndef CF_BLOB_CAPACITY
#define CF_BLOB_CAPACITY 16384
#endif

__attribute__((used, aligned(64), visibility("hidden"))) char
    __cachefit_shlib_blob[CF_BLOB_CAPACITY] = "CACHEFIT-BLOB-1\n";

extern void __cachefit_shlib_load(const char *blob) __attribute__((weak));
extern void __cachefit_shlib_unload(const char *blob) __attribute__((weak));

/* Priority 101: before the library's other constructors (which may already run an
 * invocation on its objects); the destructor runs after its other destructors. */
__attribute__((constructor(101))) static void cf_shlib_constructor(void)
{
    if (__cachefit_shlib_load)
        __cachefit_shlib_load(__cachefit_shlib_blob);
}

__attribute__((destructor(101))) static void cf_shlib_destructor(void)
{
    if (__cachefit_shlib_unload)
        __cachefit_shlib_unload(__cachefit_shlib_blob);
}
