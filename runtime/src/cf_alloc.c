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

#include <malloc.h>
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
 * when it is not on the calling thread's stack (nothing would forget it there); bit 2:
 * an object carved out of a bigger block (issue 27 item 2: a `T *` made by a cast or
 * pointer arithmetic into memory that is not an object yet), see cf_carve; bit 3: `defs`
 * is there, the name each occurrence's objects are registered under ("dict@FP": the
 * definition the unit saw, issue 27 item 4; cf_type_id files it under "dict" unless
 * the blob names that definition); bit 4: a C++ new-expression, whose constructors have
 * run when the block is seen here (see cf_site_register). */
struct __cachefit_site {
    unsigned long xsize;
    unsigned long single;
    unsigned long flags;
    unsigned long nocc;
    const struct __cachefit_occ *occ;
    const char *const *defs;
};

enum { CF_SITE_HAS_DTOR = 1, CF_SITE_HEAP_ONLY = 2, CF_SITE_CARVE = 4, CF_SITE_DEFS = 8,
       CF_SITE_NEW = 16 };

/* Set by cf_core.c's blob loader when the blob maps some "NAME@FP" to a definition's
 * type (issue 27: a traced name with several definitions in the program). */
extern int cf_named_definitions CF_HIDDEN;
/* cf_forget_overlapping for objects of the types in `types` only (cf_core.c). */
void cf_forget_own_types(uintptr_t base, uintptr_t len, uint64_t types) CF_HIDDEN;

/* The type id of an occurrence's objects: by the unit's definition ("dict@FP") only
 * when the program tells definitions apart, else by the plain name as before. */
static int cf_occ_type(const struct __cachefit_site *s, unsigned long k)
{
    return cf_type_id((s->flags & CF_SITE_DEFS) && cf_named_definitions ? s->defs[k]
                                                                         : s->occ[k].type);
}

/* Register the objects of an allocated block.  `heap`: the block is fresh memory (malloc
 * & co, configured allocators, typed allocation sites, new-expressions), so the objects
 * registered before that overlap it are stale and are forgotten first (issue 27: pools
 * re-carving their buffer, free lists, reuse without a free cachefit saw; see
 * cf_forget_overlapping in cf_core.c).  A new-expression's block is seen after its
 * constructors ran: only objects of the site's own types (registered again here) are
 * forgotten, not those of other types its constructors registered in it (a base class's
 * object at the derived object's address, issue 27).  Constructors are not heap blocks: a
 * member's constructor has registered it inside its enclosing object, and forgets
 * nothing. */
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
            int type = cf_occ_type(s, k);
            if (type >= 0 && type < 64)
                types |= (uint64_t)1 << type;
        }
        unsigned long len = n <= (unsigned long)-1 / s->xsize ? n * s->xsize : total;
        if (len < total)
            len = total;
        if (s->flags & CF_SITE_NEW)
            cf_forget_own_types((uintptr_t)p, len, types);
        else
            cf_forget_reused((uintptr_t)p, len, types);
    }
    for (unsigned long k = 0; k < s->nocc; k++) {
        const struct __cachefit_occ *o = &s->occ[k];
        int type = cf_occ_type(s, k);
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

/* Forget every object inside a heap block that is freed or moved: the one at its base
 * and those at other offsets (members of an allocated record registered at their
 * offsets, objects carved out of the block).  Lock-free when the block lies outside
 * every registered object's range. */
static void cf_forget_block(void *p)
{
    uintptr_t a = (uintptr_t)p, len = malloc_usable_size(p);
    uintptr_t lo = RD(cf_lo), span = RD(cf_span);
    if (len && a + len > lo && a - lo < span)
        cf_forget_overlapping(a, len, 0);
    else
        cf_forget(a, -1);
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
        cf_forget_block(old);
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
        cf_forget_block(p);
    free(p);
}

/* For allocators named in cachefit.toml, typed allocation calls and C++
 * new-expressions. */
/* The carve sites this thread registered last, by address: re-running a carve (a pool
 * handing out the same chunk, a cursor re-opened in the same blob) registers nothing
 * again while the object registered there is still there. */
enum { CF_CARVED = 64 };
static CF_TLS struct { uintptr_t p; const struct __cachefit_site *site; } cf_carved[CF_CARVED];

/* An object carved out of a bigger block at `p` (issue 27 item 2).  An object already
 * registered at p is that object, seen through another pointer type (a view), unless
 * this thread carved p last at another site (a pool re-carving its buffer for another
 * type): then, as when p was no object's base, the objects it makes stale are forgotten
 * and the site's objects registered (cf_site_register).  Nothing on the calling thread's
 * stack is registered: nothing would forget it.  (Without a lookup of the registry here,
 * a carve inside a registered array off its elements' bases is registered as an object
 * of its own.) */
static void cf_carve(void *p, const struct __cachefit_site *site)
{
    uintptr_t a = (uintptr_t)p;
    unsigned slot = (unsigned)((a >> 3) ^ (a >> 11)) & (CF_CARVED - 1);
    uintptr_t first = a + (site->nocc ? site->occ[0].off : 0);  /* its first object */
    if (cf_is_registered(first) && (cf_carved[slot].p != a || cf_carved[slot].site == site))
        return;
    if (cf_on_own_stack(a))
        return;
    cf_site_register(p, site->xsize, site, 1);
    cf_carved[slot].p = a;
    cf_carved[slot].site = site;
}

void *__cachefit_track(void *p, unsigned long total, const struct __cachefit_site *site)
{
    if (p && site && (site->flags & CF_SITE_CARVE)) {
        cf_carve(p, site);
        return p;
    }
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
