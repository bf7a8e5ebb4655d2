/* cf_alloc.c - the entry points that profile-mode code calls besides loads and stores
 * and invocation begin/end (__cachefit_enter/__cachefit_leave, in cf_core.c): heap
 * registration at the allocation sites and constructors the compiler wrapper rewrote,
 * and the public API of runtime/include/cachefit.h.
 *
 * The compiler wrapper (src/cachefit/pipeline/compiler_wrapper.py) emits calls with
 * exactly these signatures; keep the two in step.  Nothing here is on the
 * per-access path.  Memory is forgotten before it is freed so that another thread
 * reusing the address cannot have its new registration removed.
 */
#define _GNU_SOURCE
#include "cf_internal.h"

#include <stdlib.h>

/* One occurrence of a target type inside an allocated element of `xsize` bytes:
 * `count` objects of `elem` bytes, `stride` apart, starting at `off`. */
struct __cachefit_occ {
    unsigned long off, count, elem, stride;
    const char *type;
};

/* What one allocation site allocates: elements of `xsize` bytes (the allocation
 * holds size / xsize of them, or exactly one when `single`), each holding the
 * listed occurrences.  `flags` bit 0: a destructor forgets the object; bit 1: a typed
 * call the wrapper found without configuration, whose result is registered only
 * when it is not on the calling thread's stack (nothing would forget it there). */
struct __cachefit_site {
    unsigned long xsize;
    unsigned long single;
    unsigned long flags;
    unsigned long nocc;
    const struct __cachefit_occ *occ;
};

enum { CF_SITE_HAS_DTOR = 1, CF_SITE_HEAP_ONLY = 2 };

/* Register the objects of an allocated block.  `heap`: the block is fresh memory (malloc
 * & co, configured allocators, typed allocation sites, new-expressions), so the objects
 * registered before that overlap it are stale and are forgotten first (issue 27: pools
 * re-carving their buffer, free lists, reuse without a free cachefit saw; see
 * cf_forget_overlapping in cf_core.c).  Constructors are not: a member's constructor has
 * registered it inside its enclosing object, and forgets nothing. */
static void cf_site_register(void *p, unsigned long total, const struct __cachefit_site *s,
                             int heap)
{
    if (!p || !s || !s->xsize)
        return;
    cf_init();
    unsigned long n = s->single ? 1 : total / s->xsize;
    if (!n)
        return;
    if (heap) {
        uint64_t types = 0;
        for (unsigned long k = 0; k < s->nocc; k++) {
            int type = cf_type_id(s->occ[k].type);
            if (type >= 0 && type < 64)
                types |= (uint64_t)1 << type;
        }
        unsigned long len = n <= (unsigned long)-1 / s->xsize ? n * s->xsize : total;
        if (len < total)
            len = total;
        cf_forget_overlapping((uintptr_t)p, len, types);
    }
    for (unsigned long k = 0; k < s->nocc; k++) {
        const struct __cachefit_occ *o = &s->occ[k];
        int type = cf_type_id(o->type);
        if (type < 0)
            continue;
        if (o->count == 1) {
            /* One object per element: a strided array over the elements. */
            unsigned long stride = n == 1 ? o->elem : s->xsize;
            cf_register((uintptr_t)p + o->off, n, o->elem, stride, type, 0);
        } else {
            for (unsigned long i = 0; i < n; i++)
                cf_register((uintptr_t)p + i * s->xsize + o->off, o->count, o->elem, o->stride,
                            type, 0);
        }
    }
}

void *__cachefit_malloc(unsigned long size, const struct __cachefit_site *site)
{
    void *p = malloc(size);
    cf_site_register(p, size, site, 1);
    return p;
}

void *__cachefit_calloc(unsigned long n, unsigned long size, const struct __cachefit_site *site)
{
    void *p = calloc(n, size);
    if (p && (!size || n <= (unsigned long)-1 / size))
        cf_site_register(p, n * size, site, 1);
    return p;
}

void *__cachefit_realloc(void *old, unsigned long size, const struct __cachefit_site *site)
{
    if (old)
        cf_forget((uintptr_t)old, -1);
    void *p = realloc(old, size);
    cf_site_register(p, size, site, 1);
    return p;
}

void *__cachefit_aligned_alloc(unsigned long align, unsigned long size,
                               const struct __cachefit_site *site)
{
    void *p = aligned_alloc(align, size);
    cf_site_register(p, size, site, 1);
    return p;
}

void __cachefit_free(void *p)
{
    if (p)
        cf_forget((uintptr_t)p, -1);
    free(p);
}

/* For allocators named in cachefit.toml, typed allocation calls and C++
 * new-expressions. */
void *__cachefit_track(void *p, unsigned long total, const struct __cachefit_site *site)
{
    if (p && site && (site->flags & CF_SITE_HEAP_ONLY) && cf_on_own_stack((uintptr_t)p))
        return p;
    cf_site_register(p, total, site, 1);
    return p;
}

/* For deallocators named in cachefit.toml and for C++ delete-expressions. */
void *__cachefit_untrack(void *p)
{
    if (p)
        cf_forget((uintptr_t)p, -1);
    return p;
}

/* Constructors of a target class.  An object on the current thread's stack is
 * registered only when the class has a destructor to forget it again; otherwise
 * the registration would outlive the frame. */
void __cachefit_ctor(const void *self, const struct __cachefit_site *site)
{
    if (!self || !site)
        return;
    if (!(site->flags & CF_SITE_HAS_DTOR) && cf_on_own_stack((uintptr_t)self))
        return;
    cf_site_register((void *)(uintptr_t)self, site->xsize, site, 0);
}

void __cachefit_dtor(const void *self, const char *type)
{
    if (self)
        cf_forget((uintptr_t)self, cf_type_id(type));
}

/* ---- public API (cachefit.h) ---- */

void cachefit_object(const void *ptr, unsigned long size, const char *type)
{
    cf_init();
    cf_register((uintptr_t)ptr, 1, size, size, cf_type_id(type), 0);
}

void cachefit_array(const void *ptr, unsigned long count, unsigned long size, unsigned long stride,
                    const char *type)
{
    cf_init();
    cf_register((uintptr_t)ptr, count, size, stride, cf_type_id(type), 0);
}

void cachefit_forget(const void *ptr)
{
    cf_forget((uintptr_t)ptr, -1);
}

void cachefit_begin(void)
{
    cf_enter(-1, 0);
}

void cachefit_end(void)
{
    cf_leave();
}

void cachefit_dump(void)
{
    cf_init();
    cf_dump_now();
}
