/* Stores clang's optimizer turns into llvm.memset before sanitizer coverage runs (issue 26;
 * see test_trace_merged_stores.py).  reset() is zlib's init_block (trees.c:419): at -O2
 * MemCpyOpt merges the adjacent zero stores to opt_len, static_len and matches into one
 * 20-byte memset; clear_count() is gen_bitlen's loop over bl_count, which LoopIdiomRecognize
 * makes a 32-byte memset; copy_count() is a loop it makes a memcpy.  Sanitizer coverage
 * instruments load and store instructions only, so unless the profile build keeps
 * these idioms from being formed, none of their writes is traced. */
#include <stdio.h>

struct state {
    unsigned sym_next;        /* 0 */
    unsigned sym_end;         /* 4 */
    unsigned long opt_len;    /* 8 */
    unsigned long static_len; /* 16 */
    unsigned matches;         /* 24 */
    unsigned insert;          /* 28 */
    unsigned short count[16]; /* 32 */
};

struct state g;
static unsigned short saved[16];

__attribute__((noinline)) void reset(struct state *s)
{
    s->opt_len = s->static_len = 0L;
    s->sym_next = s->matches = 0;
}

__attribute__((noinline)) void clear_count(struct state *s)
{
    for (int i = 0; i < 16; i++)
        s->count[i] = 0;
}

__attribute__((noinline)) void copy_count(struct state *s)
{
    for (int i = 0; i < 16; i++)
        s->count[i] = saved[i];
}

int main(void)
{
    g.sym_next = 5, g.sym_end = 7, g.opt_len = 9, g.matches = 11, g.insert = 3;
    g.count[5] = 13;
    saved[5] = 17;
    reset(&g);
    clear_count(&g);
    copy_count(&g);
    printf("%u %lu %u\n", g.sym_end + g.matches + g.sym_next, g.opt_len + g.static_len,
           g.count[5] + g.insert);
    return 0;
}
