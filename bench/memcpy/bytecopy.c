/* The high-level copy COCOON compiles for the target: a plain byte loop.
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns so the compiler keeps it a
 * loop (vectorised as the flags allow) instead of turning it back into a call to memcpy. */
#include <stddef.h>

void *byte_copy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}
