/* cf_tsan.c - the __tsan_* entry points that gcc's -fsanitize=thread instrumentation
 * calls, implemented as cachefit's access tracer instead of a race detector.
 *
 * Plain loads and stores (__tsan_readN/writeN, volatile, unaligned and range forms)
 * go to the per-access path.  gcc replaces atomic operations by calls to
 * __tsan_atomicN_*: these must perform the operation atomically (always with
 * sequentially consistent ordering, which is at least as strong as asked) and are
 * recorded as a read (load), a write (store), or a read then a write (read-modify-
 * write; a compare-exchange writes only when it succeeds).
 * Function entry/exit hooks are no-ops (the wrapper turns them off anyway).
 */
#include "cf_internal.h"

#include <stdint.h>

typedef uint8_t a8;
typedef uint16_t a16;
typedef uint32_t a32;
typedef uint64_t a64;
typedef unsigned __int128 a128;

#define SC __ATOMIC_SEQ_CST
#define CF_RMW(a, n)                 \
    do {                             \
        cf_access(a, n, CF_READ);    \
        cf_access(a, n, CF_WRITE);   \
    } while (0)

#define CF_TSAN_RW(n)                                                                          \
    void __tsan_read##n(const volatile void *p) { cf_access(p, n, CF_READ); }                  \
    void __tsan_write##n(const volatile void *p) { cf_access(p, n, CF_WRITE); }                \
    void __tsan_volatile_read##n(const volatile void *p) { cf_access(p, n, CF_READ); }         \
    void __tsan_volatile_write##n(const volatile void *p) { cf_access(p, n, CF_WRITE); }       \
    void __tsan_unaligned_read##n(const volatile void *p) { cf_access(p, n, CF_READ); }        \
    void __tsan_unaligned_write##n(const volatile void *p) { cf_access(p, n, CF_WRITE); }      \
    void __tsan_unaligned_volatile_read##n(const volatile void *p) { cf_access(p, n, CF_READ); } \
    void __tsan_unaligned_volatile_write##n(const volatile void *p) { cf_access(p, n, CF_WRITE); }

CF_TSAN_RW(1)
CF_TSAN_RW(2)
CF_TSAN_RW(4)
CF_TSAN_RW(8)
CF_TSAN_RW(16)

void __tsan_read_range(const volatile void *p, unsigned long size)
{
    cf_access(p, size > 0xffff ? 0xffff : (unsigned)size, CF_READ);
}

void __tsan_write_range(const volatile void *p, unsigned long size)
{
    cf_access(p, size > 0xffff ? 0xffff : (unsigned)size, CF_WRITE);
}

void __tsan_vptr_update(void **vptr, void *value)
{
    (void)value;
    cf_access(vptr, sizeof(void *), CF_WRITE);
}

void __tsan_vptr_read(void **vptr)
{
    cf_access(vptr, sizeof(void *), CF_READ);
}

void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}

void __tsan_atomic_thread_fence(int mo)
{
    (void)mo;
    __atomic_thread_fence(SC);
}

void __tsan_atomic_signal_fence(int mo)
{
    (void)mo;
    __atomic_signal_fence(SC);
}

/* 1- to 8-byte atomics: the compiler's own atomic builtins. */
#define CF_ATOMIC(n, T)                                                                        \
    T __tsan_atomic##n##_load(const volatile T *a, int mo)                                     \
    {                                                                                          \
        (void)mo;                                                                              \
        cf_access(a, sizeof(T), CF_READ);                                                      \
        return __atomic_load_n(a, SC);                                                         \
    }                                                                                          \
    void __tsan_atomic##n##_store(volatile T *a, T v, int mo)                                  \
    {                                                                                          \
        (void)mo;                                                                              \
        cf_access(a, sizeof(T), CF_WRITE);                                                     \
        __atomic_store_n(a, v, SC);                                                            \
    }                                                                                          \
    T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo)                                  \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_exchange_n(a, v, SC);                                                  \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int mo)                                 \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_add(a, v, SC);                                                   \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int mo)                                 \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_sub(a, v, SC);                                                   \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int mo)                                 \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_and(a, v, SC);                                                   \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int mo)                                  \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_or(a, v, SC);                                                    \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int mo)                                 \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_xor(a, v, SC);                                                   \
    }                                                                                          \
    T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int mo)                                \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, sizeof(T));                                                             \
        return __atomic_fetch_nand(a, v, SC);                                                  \
    }                                                                                          \
    int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo) \
    {                                                                                          \
        (void)mo;                                                                              \
        (void)fmo;                                                                             \
        cf_access(a, sizeof(T), CF_READ);                                                      \
        int ok = __atomic_compare_exchange_n(a, c, v, 0, SC, SC);                              \
        if (ok)                                                                                \
            cf_access(a, sizeof(T), CF_WRITE);                                                 \
        return ok;                                                                             \
    }                                                                                          \
    int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)   \
    {                                                                                          \
        (void)mo;                                                                              \
        (void)fmo;                                                                             \
        cf_access(a, sizeof(T), CF_READ);                                                      \
        int ok = __atomic_compare_exchange_n(a, c, v, 1, SC, SC);                              \
        if (ok)                                                                                \
            cf_access(a, sizeof(T), CF_WRITE);                                                 \
        return ok;                                                                             \
    }                                                                                          \
    T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)       \
    {                                                                                          \
        (void)mo;                                                                              \
        (void)fmo;                                                                             \
        cf_access(a, sizeof(T), CF_READ);                                                      \
        if (__atomic_compare_exchange_n(a, &c, v, 0, SC, SC))                                  \
            cf_access(a, sizeof(T), CF_WRITE);                                                 \
        return c;                                                                              \
    }

CF_ATOMIC(8, a8)
CF_ATOMIC(16, a16)
CF_ATOMIC(32, a32)
CF_ATOMIC(64, a64)

/* 16-byte atomics: a compare-and-swap loop on cmpxchg16b where the target has it
 * (the runtime is built with -mcx16 on x86-64), so no libatomic is needed. */
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
static a128 cf_cas128(volatile a128 *a, a128 expect, a128 v)
{
    return __sync_val_compare_and_swap(a, expect, v);
}
#else
static volatile int cf_lock128;
static a128 cf_cas128(volatile a128 *a, a128 expect, a128 v)
{
    while (__atomic_exchange_n(&cf_lock128, 1, __ATOMIC_ACQUIRE))
        ;
    a128 old = *a;
    if (old == expect)
        *a = v;
    __atomic_store_n(&cf_lock128, 0, __ATOMIC_RELEASE);
    return old;
}
#endif

static a128 cf_load128(const volatile a128 *a)
{
    return cf_cas128((volatile a128 *)a, 0, 0);
}

#define CF_RMW128(name, expr)                                                                  \
    a128 __tsan_atomic128_##name(volatile a128 *a, a128 v, int mo)                             \
    {                                                                                          \
        (void)mo;                                                                              \
        CF_RMW(a, 16);                                                                          \
        a128 old = cf_load128(a), seen;                                                        \
        while ((seen = cf_cas128(a, old, (expr))) != old)                                      \
            old = seen;                                                                        \
        return old;                                                                            \
    }

a128 __tsan_atomic128_load(const volatile a128 *a, int mo)
{
    (void)mo;
    cf_access(a, 16, CF_READ);
    return cf_load128(a);
}

void __tsan_atomic128_store(volatile a128 *a, a128 v, int mo)
{
    (void)mo;
    cf_access(a, 16, CF_WRITE);
    a128 old = cf_load128(a), seen;
    while ((seen = cf_cas128(a, old, v)) != old)
        old = seen;
}

CF_RMW128(exchange, v)
CF_RMW128(fetch_add, old + v)
CF_RMW128(fetch_sub, old - v)
CF_RMW128(fetch_and, old & v)
CF_RMW128(fetch_or, old | v)
CF_RMW128(fetch_xor, old ^ v)
CF_RMW128(fetch_nand, ~(old & v))

int __tsan_atomic128_compare_exchange_strong(volatile a128 *a, a128 *c, a128 v, int mo, int fmo)
{
    (void)mo;
    (void)fmo;
    cf_access(a, 16, CF_READ);
    a128 old = cf_cas128(a, *c, v);
    if (old == *c) {
        cf_access(a, 16, CF_WRITE);
        return 1;
    }
    *c = old;
    return 0;
}

int __tsan_atomic128_compare_exchange_weak(volatile a128 *a, a128 *c, a128 v, int mo, int fmo)
{
    return __tsan_atomic128_compare_exchange_strong(a, c, v, mo, fmo);
}

a128 __tsan_atomic128_compare_exchange_val(volatile a128 *a, a128 c, a128 v, int mo, int fmo)
{
    (void)mo;
    (void)fmo;
    cf_access(a, 16, CF_READ);
    a128 old = cf_cas128(a, c, v);
    if (old == c)
        cf_access(a, 16, CF_WRITE);
    return old;
}
