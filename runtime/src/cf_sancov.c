/* cf_sancov.c - callbacks of clang's -fsanitize-coverage=trace-loads,trace-stores.
 *
 * clang calls __sanitizer_cov_loadN / __sanitizer_cov_storeN with the address just
 * before each N-byte load or store of an instrumented function.  Each callback is
 * the per-access path (cf_access): no allocation, no locks.  The access itself is
 * still done by the program, so atomics stay atomic.
 */
#include "cf_internal.h"

#include <stddef.h>

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
    if (!cf_access_inside(&cf_self, (uintptr_t)p, sm))
        cf_record_slow((uintptr_t)p, sm);
}

/* A first count in counting mode, from the inlined checks: their subtraction took one
 * from the fast role's counter at 0 (cf_thread.fcnt: minus the count) and borrowed.  The
 * count is given back; then the access goes as when the counter was tested before it was
 * counted: nothing unless the thread is in an invocation, else as __cachefit_access (at a
 * first count: cf_record_slow, cf_count_first). */
static inline __attribute__((always_inline)) int cf_count_giveback(cf_thread *t, uintptr_t a,
                                                                   uint64_t sm)
{
    if (t->fcnt) /* (it was when the check counted) */
        t->fcnt[CF_CNT_INDEX(a - t->fbase, (uint32_t)(sm >> 32) & 0xffff,
                             (uint32_t)(sm >> 63))]++;
    return t->active;
}

void __cachefit_count_first(const volatile void *p, uint64_t sm)
{
    cf_thread *t = &cf_self;
    if (cf_count_giveback(t, (uintptr_t)p, sm) && !cf_access_inside(t, (uintptr_t)p, sm))
        cf_record_slow((uintptr_t)p, sm);
}

#if defined(__x86_64__) && defined(__ELF__)
/* __cachefit_access for callers that assume clang's preserve_most convention (the
 * inlined checks on x86-64): every general register except r11 is preserved, so the
 * instrumented function need not keep its values out of the caller-saved registers
 * around this call.  Vector registers are the caller's to save.
 * The thunks below save every register the C convention lets a callee clobber (r11
 * excepted) around a call of a C function.  Built by clang, __cachefit_access_pm is itself
 * a preserve_most function that makes no call except (as a tail call) the thunk of
 * cf_record_slow, so it saves only the registers its own paths use; built by another
 * compiler, it is the thunk of the C function. */
/* An assembly function NAME (VISIBILITY: an assembler directive line, or "") that saves the
 * registers a C callee may clobber (r11 excepted), calls the C function TARGET and
 * restores them: a preserve_most entry point for a C function. */
#define CF_PM_THUNK(name, visibility, target)                                                   \
    __asm__(".text\n" visibility ".globl " #name "\n"                                           \
            ".type " #name ", @function\n"                                                      \
            ".p2align 4\n" #name ":\n"                                                          \
            ".cfi_startproc\n"                                                                  \
            "push %rax\n.cfi_adjust_cfa_offset 8\n"                                             \
            "push %rcx\n.cfi_adjust_cfa_offset 8\n"                                             \
            "push %rdx\n.cfi_adjust_cfa_offset 8\n"                                             \
            "push %rsi\n.cfi_adjust_cfa_offset 8\n"                                             \
            "push %rdi\n.cfi_adjust_cfa_offset 8\n"                                             \
            "push %r8\n.cfi_adjust_cfa_offset 8\n"                                              \
            "push %r9\n.cfi_adjust_cfa_offset 8\n"                                              \
            "push %r10\n.cfi_adjust_cfa_offset 8\n"                                             \
            "sub $8, %rsp\n.cfi_adjust_cfa_offset 8\n"                                          \
            "call " #target "\n"                                                                \
            "add $8, %rsp\n.cfi_adjust_cfa_offset -8\n"                                         \
            "pop %r10\n.cfi_adjust_cfa_offset -8\n"                                             \
            "pop %r9\n.cfi_adjust_cfa_offset -8\n"                                              \
            "pop %r8\n.cfi_adjust_cfa_offset -8\n"                                              \
            "pop %rdi\n.cfi_adjust_cfa_offset -8\n"                                             \
            "pop %rsi\n.cfi_adjust_cfa_offset -8\n"                                             \
            "pop %rdx\n.cfi_adjust_cfa_offset -8\n"                                             \
            "pop %rcx\n.cfi_adjust_cfa_offset -8\n"                                             \
            "pop %rax\n.cfi_adjust_cfa_offset -8\n"                                             \
            "ret\n"                                                                             \
            ".cfi_endproc\n"                                                                    \
            ".size " #name ", .-" #name "\n")

#if defined(__clang__)
__attribute__((preserve_most)) void cf_record_slow_pm(uintptr_t a, uint64_t sm) CF_HIDDEN;
__attribute__((preserve_most)) void __cachefit_access_pm(const volatile void *p, uint64_t sm);
void __cachefit_access_pm(const volatile void *p, uint64_t sm)
{
    if (!cf_access_inside(&cf_self, (uintptr_t)p, sm))
        cf_record_slow_pm((uintptr_t)p, sm);
}
/* __cachefit_count_first, preserve_most as __cachefit_access_pm. */
__attribute__((preserve_most)) void __cachefit_count_first_pm(const volatile void *p,
                                                              uint64_t sm);
void __cachefit_count_first_pm(const volatile void *p, uint64_t sm)
{
    cf_thread *t = &cf_self;
    if (cf_count_giveback(t, (uintptr_t)p, sm) && !cf_access_inside(t, (uintptr_t)p, sm))
        cf_record_slow_pm((uintptr_t)p, sm);
}
#else
void cf_access_hidden(const volatile void *p, uint64_t sm) CF_HIDDEN;
void cf_access_hidden(const volatile void *p, uint64_t sm)
{
    if (!cf_access_inside(&cf_self, (uintptr_t)p, sm))
        cf_record_slow((uintptr_t)p, sm);
}

CF_PM_THUNK(__cachefit_access_pm, "", cf_access_hidden);
CF_PM_THUNK(__cachefit_count_first_pm, "", __cachefit_count_first);
#endif

CF_PM_THUNK(cf_record_slow_pm, ".hidden cf_record_slow_pm\n", cf_record_slow);
#endif

/* A run of accesses through one base pointer (runtime/inline/cf_sancov_inline.c, which
 * defines the layout, and the cf_coalesce pass).  __cachefit_run_slow: the inlined
 * __cachefit_run found the run's extent outside the fast role; each member is then one
 * access, in order, exactly as its own callback would have taken it.  __cachefit_run:
 * the same for code compiled without the inline definitions. */
/* Declared on both sides of the interface, as cf_thread's head is (the inline file is
 * compiled alone); the layout is asserted on both. */
struct cf_run_desc {
    uint32_t n;
    int32_t lo;
    int32_t hi;
    uint32_t zero;
    uint64_t member[];
};
_Static_assert(offsetof(struct cf_run_desc, member) == 16, "cf_sancov_inline.c: member at 16");
void __cachefit_run_slow(const volatile void *base, const struct cf_run_desc *d);
void __cachefit_run_first(const volatile void *base, const struct cf_run_desc *d);
void __cachefit_run(const volatile void *base, const struct cf_run_desc *d);

/* The quads of a run whose extent [s, e) lies in one object that cf_access_inside would
 * take each member to without a lookup (the second fast role, the other type's role, one
 * of the first roles of the invocation), appended at once when there is room for all; 0
 * when not (the members then go one by one). */
static int cf_run_inside(cf_thread *t, uintptr_t base, uintptr_t s, uintptr_t e,
                         const struct cf_run_desc *d)
{
    if (!t->active || s >= e)
        return 0;
    unsigned long seq = __atomic_load_n(&cf_killseq, __ATOMIC_ACQUIRE);
    uintptr_t rbase;
    uint64_t tag;
    uint64_t *pos, *end;
    uint32_t *len = NULL;
    uint64_t **adv = &t->fpos; /* the position to advance, when not len[] */
    if (s - t->fbase2 < t->fsize2 && e - t->fbase2 <= t->fsize2 && t->fseq == seq) {
        rbase = t->fbase2;
        tag = t->ftag2;
        pos = t->fpos;
        end = t->fend;
    } else if (s - t->fbase3 < t->fsize3 && e - t->fbase3 <= t->fsize3 && t->fseq == seq) {
        rbase = t->fbase3;
        tag = t->ftag3;
        pos = t->fpos3;
        end = t->fend3;
        adv = &t->fpos3;
    } else {
        const cf_role *r = cf_inline_role(t, s);
        if (!r || e - r->base > r->size || r->seq != seq)
            return 0;
        rbase = r->base;
        tag = r->tag;
        if (r->type == t->ftype && t->fpos) {
            pos = t->fpos;
            end = t->fend;
        } else if (r->type == t->ftype3 && t->fpos3) {
            pos = t->fpos3;
            end = t->fend3;
            adv = &t->fpos3;
        } else {
            len = &t->len[r->type];
            pos = r->slice + *len;
            end = r->slice + t->cap[r->type];
        }
    }
    if (!pos || (uintptr_t)(end - pos) < d->n)
        return 0;
    for (uint32_t i = 0; i < d->n; i++) {
        uint64_t m = d->member[i];
        uintptr_t a = base + (uintptr_t)(intptr_t)(int32_t)(uint32_t)m;
        pos[i] = (uint64_t)(uint32_t)(a - rbase) | CF_SM((m >> 32) & 0xffff, m >> 63) | tag;
    }
    if (len)
        *len += d->n;
    else
        *adv = pos + d->n;
    return 1;
}

void __cachefit_run_slow(const volatile void *base, const struct cf_run_desc *d)
{
    /* A run between objects (its extent's few granules empty in the shadow) records
     * nothing, as each member would find. */
    const unsigned char *sh = RD(cf_shadow);
    uintptr_t s = (uintptr_t)base + (uintptr_t)(intptr_t)d->lo;
    uintptr_t e = (uintptr_t)base + (uintptr_t)(intptr_t)d->hi;
    if (sh && s < e && ((e - 1) >> CF_SHADOW_SHIFT) - (s >> CF_SHADOW_SHIFT) < 4) {
        uintptr_t g = s >> CF_SHADOW_SHIFT, g1 = (e - 1) >> CF_SHADOW_SHIFT;
        while (g <= g1 && !RD(sh[g]))
            g++;
        if (g > g1)
            return;
    }
    if (cf_run_inside(&cf_self, (uintptr_t)base, s, e, d))
        return;
    for (uint32_t i = 0; i < d->n; i++) {
        uint64_t m = d->member[i];
        const volatile char *p = (const volatile char *)base + (int32_t)(uint32_t)m;
        cf_access(p, (unsigned)(m >> 32) & 0xffffu, (unsigned)(m >> 63));
    }
}

/* A run's first count in counting mode (the inlined __cachefit_run counted every member,
 * and one counter was at 0): every member's count is given back, then the run goes as
 * when the counters were tested before they were counted: nothing unless the thread is in
 * an invocation, else member by member (__cachefit_run_slow). */
void __cachefit_run_first(const volatile void *base, const struct cf_run_desc *d)
{
    cf_thread *t = &cf_self;
    uintptr_t off = (uintptr_t)base - t->fbase;
    for (uint32_t i = 0; t->fcnt && i < d->n; i++) {
        uint64_t m = d->member[i];
        t->fcnt[CF_CNT_INDEX(off + (uintptr_t)(intptr_t)(int32_t)(uint32_t)m,
                             (uint32_t)(m >> 32) & 0xffff, (uint32_t)(m >> 63))]++;
    }
    if (t->active)
        __cachefit_run_slow(base, d);
}

void __cachefit_run(const volatile void *base, const struct cf_run_desc *d)
{
    __cachefit_run_slow(base, d);
}

CF_SANCOV(1)
CF_SANCOV(2)
CF_SANCOV(4)
CF_SANCOV(8)
CF_SANCOV(16)
