/* Runs of accesses for runtime/pass/cf_coalesce.cpp (tests/trace/test_trace_coalesce.py). */
#include <stddef.h>

struct s {
    int a, b, c;
    long d;
    char e[32];
};

struct wide {
    int f[18];
};

void ext(void);

/* One run of 3: load b, load c, store a. */
void three(struct s *s)
{
    s->a = s->b + s->c;
}

/* A call splits: load a | call | store b, store c (one run of 2, one single check). */
void split_by_call(struct s *s)
{
    int x = s->a;
    ext();
    s->b = x;
    s->c = x + 1;
}

/* A memcpy splits too: a run of 2 before it, one of 2 after it. */
void split_by_memcpy(struct s *s, const char *src, size_t n)
{
    s->a = 1;
    s->b = 2;
    __builtin_memcpy(s->e, src, n);
    s->c = 3;
    s->d = 4;
}

/* Two bases alternating: load t->c, store s->a, load t->d, store s->d; no run. */
void alternate(struct s *s, const struct s *t)
{
    s->a = t->c;
    s->d = t->d;
}

/* 18 loads of one object: a run of 16, then one of 2. */
int eighteen(const struct wide *w)
{
    int x = 0;
    for (int i = 0; i < 18; i++)
        x ^= w->f[i] << (i & 7);
    return x;
}
