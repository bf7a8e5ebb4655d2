/*
 * cachefit QEMU TCG plugin: per-invocation field-access sequences of target types.
 *
 * Implements the tracing design of paper 000, section IV, inside the emulator:
 *   - an invocation is one kernel entry -> exit (system mode: a translation block in one of the
 *     kernel code ranges runs after one outside them, until one outside runs again), or one
 *     call -> return of an entry function (user mode, see tb_exec_user);
 *   - tracing happens only between two guest events (the phase): the first execution of the
 *     phase_start address and the first execution of the phase_end address after it;
 *   - memory accesses are filtered by address: static objects (base, size, extent) and object
 *     areas (base, stride, count: object i at base + i*stride, of the type's size) tell the
 *     target type and the object's base; an access inside an area's block or a static
 *     object's extent but beyond the object is counted as "outside_objects";
 *   - an access becomes a quadruple (role, offset, size, r/w), the role being the number of the
 *     distinct object of that type in order of first touch since the invocation began;
 *   - per type, the quadruples of one invocation form a sequence; at the invocation's end it
 *     is looked up in a hash table of unique sequences and counted;
 *   - runaway sequences (more than max_accesses quadruples of a type, or a type's object
 *     beyond max_objects in one invocation) are dropped and counted, as in the compile-time
 *     tracer (runtime/src/cf_core.c); so are new sequences beyond max_sequences (table_full).
 *
 * Configuration: one argument, config=FILE, naming a text file written by the Python side
 * (cachefit.trace.qemu_backend); format in docs/qemu-tracing.md. The result is written to the
 * configured output file when the phase ends and, if not yet written, when QEMU exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_TYPES 64
#define MAX_RANGES 32
#define NO_ADDR UINT64_MAX

/* ---------------------------------------------------------------------------------------- */
/* configuration                                                                            */

typedef struct {
    uint64_t base;   /* first byte of the object */
    uint64_t size;   /* the type's size: accesses below base+size are in the object */
    uint64_t extent; /* bytes of the enclosing block (>= size): the rest counts as outside */
    int type;
    bool rel;        /* link-time address of a position-independent program: rebase */
} object_t;

typedef struct {
    uint64_t base, stride, count, size;
    int type;
    bool rel;
} area_t;

typedef struct {
    uint64_t lo, hi;  /* [lo, hi) */
    bool rel;
} range_t;

typedef struct {
    uint64_t size;
    atomic_uint_fast64_t runaway;
    atomic_uint_fast64_t outside;
    atomic_uint_fast64_t table_full;
    atomic_uint_fast64_t accesses;
} type_t;

static bool system_mode;
static char *out_path;
static int n_types;
static type_t types[MAX_TYPES];
static object_t *objects;
static size_t n_objects, cap_objects;
static area_t *areas;
static size_t n_areas, cap_areas;
static range_t kernel[MAX_RANGES];   /* system mode: code that is "the kernel" */
static int n_kernel;
static range_t filter[MAX_RANGES];   /* code whose memory accesses are traced (all if none) */
static int n_filter;
static uint64_t entry_addr = NO_ADDR; /* user mode: the entry function */
static bool entry_rel;
static uint64_t phase_start = NO_ADDR, phase_end = NO_ADDR;
static bool phase_start_rel, phase_end_rel;
static uint64_t link_code = NO_ADDR; /* lowest executable address at link time (a PIE) */
static size_t max_accesses = 4096;    /* per type and invocation, as the compile-time tracer */
static unsigned max_objects = 64;     /* per invocation, all types together */
static uint64_t max_sequences = 1000000; /* unique sequences kept; more count as table_full */
static uint64_t lo_addr = UINT64_MAX, hi_addr; /* bounds of all objects and areas */

/* ---------------------------------------------------------------------------------------- */
/* run-time state                                                                           */

enum { PHASE_BEFORE, PHASE_ACTIVE, PHASE_ENDED };
static atomic_int phase = PHASE_ACTIVE;
static struct timespec phase_t0, phase_t1;
static atomic_bool rebased;

typedef struct {
    uint32_t role, offset;
    uint16_t size;
    uint8_t write;
    uint8_t pad;
} quadruple_t;

typedef struct {
    uint64_t *roles;   /* object bases in order of first touch */
    unsigned n_roles;
    quadruple_t *seq;
    size_t len, cap;
    uint64_t outside;  /* accesses beyond the objects (e.g. a kernel stack after a TCB) */
    bool runaway;
} tstate_t;

/* user mode: a translation block that ran: its end (the address after its last instruction)
 * and the last memory access of its last instruction */
typedef struct {
    uint64_t end, addr;
    bool valid, store;
} tail_t;

typedef struct {
    bool in_kernel;    /* system mode: the last translation block ran in kernel code */
    bool in_inv;       /* an invocation is open */
    bool tracing;      /* ...and began while the phase was active */
    /* user mode: call/return detection */
    uint64_t ret_addr, ret_slot;
    tail_t cur, prev1, prev2; /* the running translation block and the two before it */
    unsigned n_objects; /* objects touched in this invocation, all types */
    uint64_t accesses;
    tstate_t t[MAX_TYPES];
} vcpu_t;

#define MAX_VCPUS 1024
static vcpu_t *vcpus[MAX_VCPUS]; /* (user mode: one per guest thread) */
static const size_t n_vcpus = MAX_VCPUS;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_uint_fast64_t invocations, unfinished, ignored_before_phase;
static atomic_bool written;

/* hash table of unique sequences, keyed by (type, quadruples) */
typedef struct {
    uint64_t hash, count;
    int type;
    size_t len;
    quadruple_t *seq;
} entry_t;
static entry_t *table;
static size_t table_cap, table_used;

/* ---------------------------------------------------------------------------------------- */

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cachefit-qemu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static bool parse_addr(const char *s, uint64_t *v, bool *rel)
{
    char *end;
    *rel = false;
    if (*s == 'r') { *rel = true; s++; }
    errno = 0;
    *v = strtoull(s, &end, 0);
    return errno == 0 && end != s && *end == '\0';
}

static bool parse_u(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 0);
    return errno == 0 && end != s && *end == '\0';
}

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return p;
    *cap = *cap ? *cap * 2 : 16;
    p = realloc(p, *cap * elem);
    if (!p) { fail("out of memory"); abort(); }
    return p;
}

static void note_bounds(uint64_t lo, uint64_t hi)
{
    if (lo < lo_addr) lo_addr = lo;
    if (hi > hi_addr) hi_addr = hi;
}

static int cmp_object(const void *a, const void *b)
{
    const object_t *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base;
}

/* Reads the configuration file; returns false (after a message) when it is malformed. */
static bool read_config(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { fail("cannot open config %s: %s", path, strerror(errno)); return false; }
    char line[4096];
    int lineno = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        lineno++;
        char *w[8];
        int n = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok && n < 8; tok = strtok(NULL, " \t\r\n"))
            w[n++] = tok;
        if (n == 0 || w[0][0] == '#') continue;
        uint64_t a, b, c, d;
        bool r1, r2;
#define NEED(k) do { if (n != (k)) { ok = false; break; } } while (0)
        if (!strcmp(w[0], "output")) {
            NEED(2);
            out_path = strdup(w[1]);
        } else if (!strcmp(w[0], "mode")) {
            NEED(2);
            /* informational: the mode QEMU runs in decides */
        } else if (!strcmp(w[0], "type")) {
            NEED(3);
            if (!parse_u(w[1], &a) || !parse_u(w[2], &b) || a != (uint64_t)n_types ||
                n_types >= MAX_TYPES || b == 0) { ok = false; break; }
            types[n_types++].size = b;
        } else if (!strcmp(w[0], "object")) {
            /* object TYPE BASE EXTENT : an object of the type at BASE in a block of EXTENT */
            NEED(4);
            if (!parse_u(w[1], &a) || a >= (uint64_t)n_types || !parse_addr(w[2], &b, &r1) ||
                !parse_u(w[3], &c)) { ok = false; break; }
            objects = grow(objects, &cap_objects, n_objects, sizeof *objects);
            uint64_t size = types[a].size;
            objects[n_objects++] = (object_t){ b, size, c > size ? c : size, (int)a, r1 };
        } else if (!strcmp(w[0], "area")) {
            /* area TYPE BASE STRIDE COUNT */
            NEED(5);
            if (!parse_u(w[1], &a) || a >= (uint64_t)n_types || !parse_addr(w[2], &b, &r1) ||
                !parse_u(w[3], &c) || !parse_u(w[4], &d) || c == 0 || d == 0) { ok = false; break; }
            areas = grow(areas, &cap_areas, n_areas, sizeof *areas);
            uint64_t size = types[a].size;
            areas[n_areas++] = (area_t){ b, c, d, size < c ? size : c, (int)a, r1 };
        } else if (!strcmp(w[0], "kernel") || !strcmp(w[0], "filter")) {
            /* kernel LO HI / filter LO HI : [LO, HI) */
            NEED(3);
            bool k = !strcmp(w[0], "kernel");
            if (!parse_addr(w[1], &a, &r1) || !parse_addr(w[2], &b, &r2) || b <= a ||
                (k ? n_kernel : n_filter) >= MAX_RANGES) { ok = false; break; }
            if (k) kernel[n_kernel++] = (range_t){ a, b, r1 };
            else filter[n_filter++] = (range_t){ a, b, r1 };
        } else if (!strcmp(w[0], "entry")) {
            NEED(2);
            if (!parse_addr(w[1], &entry_addr, &entry_rel)) { ok = false; break; }
        } else if (!strcmp(w[0], "phase_start")) {
            NEED(2);
            if (!parse_addr(w[1], &phase_start, &phase_start_rel)) { ok = false; break; }
        } else if (!strcmp(w[0], "phase_end")) {
            NEED(2);
            if (!parse_addr(w[1], &phase_end, &phase_end_rel)) { ok = false; break; }
        } else if (!strcmp(w[0], "link_code")) {
            NEED(2);
            if (!parse_u(w[1], &link_code)) { ok = false; break; }
        } else if (!strcmp(w[0], "max_accesses")) {
            NEED(2);
            if (!parse_u(w[1], &a) || a == 0) { ok = false; break; }
            max_accesses = a;
        } else if (!strcmp(w[0], "max_objects")) {
            NEED(2);
            if (!parse_u(w[1], &a) || a == 0 || a > 32767) { ok = false; break; }
            max_objects = (unsigned)a;
        } else if (!strcmp(w[0], "max_sequences")) {
            NEED(2);
            if (!parse_u(w[1], &a) || a == 0) { ok = false; break; }
            max_sequences = a;
        } else {
            ok = false;
        }
#undef NEED
    }
    fclose(f);
    if (!ok) fail("%s:%d: malformed line", path, lineno);
    if (ok && !out_path) { fail("%s: no 'output' line", path); ok = false; }
    return ok;
}

/* Rebase the link-time addresses of a position-independent program (user mode) and compute
 * the address bounds; runs once, before the first translation block is translated. */
static void finish_config(void)
{
    uint64_t bias = 0;
    if (!system_mode && link_code != NO_ADDR)
        bias = qemu_plugin_start_code() - link_code;
    for (size_t i = 0; i < n_objects; i++) {
        if (objects[i].rel) objects[i].base += bias;
        note_bounds(objects[i].base, objects[i].base + objects[i].extent);
    }
    for (size_t i = 0; i < n_areas; i++) {
        if (areas[i].rel) areas[i].base += bias;
        note_bounds(areas[i].base, areas[i].base + areas[i].stride * areas[i].count);
    }
    for (int i = 0; i < n_kernel; i++)
        if (kernel[i].rel) { kernel[i].lo += bias; kernel[i].hi += bias; }
    for (int i = 0; i < n_filter; i++)
        if (filter[i].rel) { filter[i].lo += bias; filter[i].hi += bias; }
    if (entry_rel) entry_addr += bias;
    if (phase_start_rel) phase_start += bias;
    if (phase_end_rel) phase_end += bias;
    qsort(objects, n_objects, sizeof *objects, cmp_object);
}

/* ---------------------------------------------------------------------------------------- */
/* per-vCPU state                                                                           */

static vcpu_t *vcpu_new(unsigned idx)
{
    if (idx >= MAX_VCPUS) { fail("more than %d vCPUs", MAX_VCPUS); abort(); }
    pthread_mutex_lock(&lock);
    if (!vcpus[idx]) {
        vcpu_t *v = calloc(1, sizeof *v);
        if (!v) abort();
        for (int t = 0; t < MAX_TYPES; t++) {
            v->t[t].roles = calloc(max_objects, sizeof *v->t[t].roles);
            if (!v->t[t].roles) abort();
        }
        v->ret_addr = NO_ADDR;
        __atomic_store_n(&vcpus[idx], v, __ATOMIC_RELEASE);
    }
    vcpu_t *v = vcpus[idx];
    pthread_mutex_unlock(&lock);
    return v;
}

static inline vcpu_t *vcpu_get(unsigned idx)
{
    vcpu_t *v = idx < MAX_VCPUS ? __atomic_load_n(&vcpus[idx], __ATOMIC_ACQUIRE) : NULL;
    return v ? v : vcpu_new(idx);
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int idx)
{
    (void)id;
    vcpu_get(idx);
}

/* ---------------------------------------------------------------------------------------- */
/* sequences                                                                                */

static uint64_t hash_seq(int type, const quadruple_t *q, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)type;
    for (size_t i = 0; i < len; i++) {
        uint64_t k = ((uint64_t)q[i].role << 48) ^ ((uint64_t)q[i].offset << 16) ^
                     ((uint64_t)q[i].size << 1) ^ q[i].write;
        h = (h ^ k) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h | 1; /* 0 marks an empty slot */
}

/* an existing entry: its count is increased */
static bool table_find(int type, const quadruple_t *q, size_t len) /* lock held */
{
    if (!table_cap) return false;
    uint64_t h = hash_seq(type, q, len);
    for (size_t j = h & (table_cap - 1); table[j].hash; j = (j + 1) & (table_cap - 1)) {
        entry_t *e = &table[j];
        if (e->hash == h && e->type == type && e->len == len &&
            !memcmp(e->seq, q, len * sizeof *q)) {
            e->count++;
            return true;
        }
    }
    return false;
}

static void table_add(int type, const quadruple_t *q, size_t len) /* lock held */
{
    if (table_used >= max_sequences && table_find(type, q, len)) return;
    if (table_used >= max_sequences) {
        atomic_fetch_add(&types[type].table_full, 1);
        return;
    }
    if (2 * (table_used + 1) > table_cap) {
        size_t ncap = table_cap ? table_cap * 2 : 1024;
        entry_t *nt = calloc(ncap, sizeof *nt);
        if (!nt) abort();
        for (size_t i = 0; i < table_cap; i++) {
            if (!table[i].hash) continue;
            size_t j = table[i].hash & (ncap - 1);
            while (nt[j].hash) j = (j + 1) & (ncap - 1);
            nt[j] = table[i];
        }
        free(table);
        table = nt;
        table_cap = ncap;
    }
    uint64_t h = hash_seq(type, q, len);
    size_t j = h & (table_cap - 1);
    while (table[j].hash) {
        entry_t *e = &table[j];
        if (e->hash == h && e->type == type && e->len == len &&
            !memcmp(e->seq, q, len * sizeof *q)) {
            e->count++;
            return;
        }
        j = (j + 1) & (table_cap - 1);
    }
    quadruple_t *copy = malloc(len * sizeof *q);
    if (!copy) abort();
    memcpy(copy, q, len * sizeof *q);
    table[j] = (entry_t){ h, 1, type, len, copy };
    table_used++;
}

static void begin_invocation(vcpu_t *v)
{
    v->in_inv = true;
    v->tracing = atomic_load_explicit(&phase, memory_order_relaxed) == PHASE_ACTIVE;
    if (!v->tracing && atomic_load_explicit(&phase, memory_order_relaxed) == PHASE_BEFORE)
        atomic_fetch_add(&ignored_before_phase, 1);
    v->n_objects = 0;
    for (int t = 0; t < n_types; t++) {
        v->t[t].n_roles = 0;
        v->t[t].len = 0;
        v->t[t].outside = 0;
        v->t[t].runaway = false;
    }
}

static void end_invocation(vcpu_t *v)
{
    v->in_inv = false;
    if (!v->tracing) return;
    v->tracing = false;
    if (atomic_load_explicit(&phase, memory_order_relaxed) != PHASE_ACTIVE) {
        atomic_fetch_add(&unfinished, 1); /* the phase ended while it ran */
        return;
    }
    atomic_fetch_add(&invocations, 1);
    bool any = false;
    for (int t = 0; t < n_types; t++) {
        if (v->t[t].outside) atomic_fetch_add(&types[t].outside, v->t[t].outside);
        if (v->t[t].runaway) atomic_fetch_add(&types[t].runaway, 1);
        else if (v->t[t].len) any = true;
    }
    if (!any) return;
    pthread_mutex_lock(&lock);
    for (int t = 0; t < n_types; t++)
        if (!v->t[t].runaway && v->t[t].len) table_add(t, v->t[t].seq, v->t[t].len);
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------------------------------- */
/* output                                                                                   */

static int cmp_entry(const void *a, const void *b)
{
    const entry_t *x = *(entry_t *const *)a, *y = *(entry_t *const *)b;
    if (x->type != y->type) return x->type - y->type;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

static double seconds(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

static void write_output(const char *why)
{
    if (atomic_exchange(&written, true)) return;
    pthread_mutex_lock(&lock);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fail("cannot write %s: %s", tmp, strerror(errno));
        pthread_mutex_unlock(&lock);
        return;
    }
    int ph = atomic_load(&phase);
    uint64_t accesses = 0;
    for (size_t i = 0; i < n_vcpus; i++)
        if (vcpus[i]) accesses += vcpus[i]->accesses;
    fprintf(f, "cachefit-qemu-trace 1\n");
    fprintf(f, "mode %s\n", system_mode ? "system" : "user");
    fprintf(f, "written_at %s\n", why);
    fprintf(f, "phase %s\n", ph == PHASE_BEFORE ? "not-started" :
                             ph == PHASE_ACTIVE ? "active" : "ended");
    if (ph != PHASE_BEFORE) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        fprintf(f, "phase_seconds %.6f\n", seconds(phase_t0, ph == PHASE_ENDED ? phase_t1 : now));
    }
    fprintf(f, "invocations %" PRIu64 "\n", (uint64_t)atomic_load(&invocations));
    fprintf(f, "unfinished %" PRIu64 "\n", (uint64_t)atomic_load(&unfinished));
    fprintf(f, "before_phase %" PRIu64 "\n", (uint64_t)atomic_load(&ignored_before_phase));
    fprintf(f, "accesses %" PRIu64 "\n", accesses);
    for (int t = 0; t < n_types; t++)
        fprintf(f, "type %d runaway %" PRIu64 " outside_objects %" PRIu64 " table_full %" PRIu64
                   " accesses %" PRIu64 "\n", t, (uint64_t)atomic_load(&types[t].runaway),
                (uint64_t)atomic_load(&types[t].outside), (uint64_t)atomic_load(&types[t].table_full),
                (uint64_t)atomic_load(&types[t].accesses));
    entry_t **sorted = malloc((table_used + 1) * sizeof *sorted);
    size_t n = 0;
    for (size_t i = 0; i < table_cap; i++)
        if (table[i].hash) sorted[n++] = &table[i];
    qsort(sorted, n, sizeof *sorted, cmp_entry);
    for (size_t i = 0; i < n; i++) {
        entry_t *e = sorted[i];
        fprintf(f, "seq %d %" PRIu64, e->type, e->count);
        for (size_t k = 0; k < e->len; k++)
            fprintf(f, " %u:%u:%u:%c", e->seq[k].role, e->seq[k].offset, e->seq[k].size,
                    e->seq[k].write ? 'w' : 'r');
        fputc('\n', f);
    }
    free(sorted);
    fprintf(f, "end\n");
    bool ok = fclose(f) == 0;
    pthread_mutex_unlock(&lock);
    if (ok && rename(tmp, out_path) != 0) ok = false;
    if (!ok) fail("cannot write %s: %s", out_path, strerror(errno));
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id; (void)p;
    for (size_t i = 0; i < n_vcpus; i++)
        if (vcpus[i] && vcpus[i]->in_inv && vcpus[i]->tracing)
            atomic_fetch_add(&unfinished, 1);
    write_output("exit");
}

/* ---------------------------------------------------------------------------------------- */
/* callbacks                                                                                */

static bool in_ranges(const range_t *r, int n, uint64_t a)
{
    for (int i = 0; i < n; i++)
        if (a >= r[i].lo && a < r[i].hi) return true;
    return false;
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t addr, void *ud)
{
    (void)ud;
    if (addr < lo_addr || addr >= hi_addr) return;
    vcpu_t *v = vcpu_get(vcpu);
    if (!v->tracing) return;
    int type = -1;
    uint64_t base = 0, size = 0;
    bool outside = false;
    /* static objects: the last one starting at or below addr */
    size_t lo = 0, hi = n_objects;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (objects[mid].base <= addr) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && addr < objects[lo - 1].base + objects[lo - 1].extent) {
        const object_t *o = &objects[lo - 1];
        type = o->type; base = o->base; size = o->size;
        outside = addr >= o->base + o->size;
    } else {
        for (size_t i = 0; i < n_areas; i++) {
            const area_t *a = &areas[i];
            if (addr < a->base) continue;
            uint64_t d = addr - a->base, k = d / a->stride;
            if (k >= a->count) continue;
            type = a->type; base = a->base + k * a->stride; size = a->size;
            outside = d - k * a->stride >= a->size;
            break;
        }
    }
    if (type < 0) return;
    if (outside) {
        v->t[type].outside++;
        return;
    }
    tstate_t *t = &v->t[type];
    if (t->runaway) return;
    unsigned role;
    for (role = 0; role < t->n_roles; role++)
        if (t->roles[role] == base) break;
    if (role == t->n_roles) {
        if (v->n_objects >= max_objects) { t->runaway = true; return; }
        v->n_objects++;
        t->roles[t->n_roles++] = base;
    }
    if (t->len == max_accesses) { t->runaway = true; return; }
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->seq = realloc(t->seq, t->cap * sizeof *t->seq);
        if (!t->seq) abort();
    }
    uint64_t off = addr - base;
    uint64_t n = 1u << qemu_plugin_mem_size_shift(info);
    if (off + n > size) n = size - off; /* the part inside the object */
    t->seq[t->len++] = (quadruple_t){ (uint32_t)role, (uint32_t)off, (uint16_t)n,
                                 qemu_plugin_mem_is_store(info), 0 };
    v->accesses++;
    atomic_fetch_add_explicit(&types[type].accesses, 1, memory_order_relaxed);
}

/* user mode: the last memory access of a translation block's last instruction (the return
 * address a call pushes, the slot a ret pops) */
static void tail_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t addr, void *ud)
{
    (void)ud;
    vcpu_t *v = vcpu_get(vcpu);
    v->cur.addr = addr;
    v->cur.valid = true;
    v->cur.store = qemu_plugin_mem_is_store(info);
}

static void marker(unsigned int vcpu, void *ud)
{
    (void)vcpu;
    uintptr_t which = (uintptr_t)ud; /* 1: phase start, 2: phase end */
    if (which & 1) {
        int expect = PHASE_BEFORE;
        if (atomic_compare_exchange_strong(&phase, &expect, PHASE_ACTIVE))
            clock_gettime(CLOCK_MONOTONIC, &phase_t0);
    }
    if (which & 2) {
        int expect = PHASE_ACTIVE;
        if (atomic_compare_exchange_strong(&phase, &expect, PHASE_ENDED)) {
            clock_gettime(CLOCK_MONOTONIC, &phase_t1);
            write_output("phase-end");
        }
    }
}

/* system mode: kernel entry and exit, by where the running translation block lies */
static void tb_exec_kernel(unsigned int vcpu, void *ud)
{
    (void)ud;
    vcpu_t *v = vcpu_get(vcpu);
    if (!v->in_kernel) {
        v->in_kernel = true;
        begin_invocation(v);
    }
}

static void tb_exec_other(unsigned int vcpu, void *ud)
{
    (void)ud;
    vcpu_t *v = vcpu_get(vcpu);
    if (v->in_kernel) {
        v->in_kernel = false;
        end_invocation(v);
    }
}

/* user mode: a translation block begins. If the previous block ended in a call, its end is the
 * return address and its tail access (a store) the stack slot the call pushed that address to.
 * An invocation begins when the entry function's first block runs right after a call, or right
 * after a block ending in a jump through memory (a PLT stub) that followed a call. It ends when a
 * block at the saved return address runs right after a block whose last instruction loaded from
 * the saved slot: the matching ret (recursive calls and other calls use other slots). */
typedef struct {
    uint64_t start, end;
    bool is_entry;
} tbinfo_t;

static void tb_exec_user(unsigned int vcpu, void *ud)
{
    const tbinfo_t *tb = ud;
    vcpu_t *v = vcpu_get(vcpu);
    v->prev2 = v->prev1;
    v->prev1 = v->cur;
    v->cur = (tail_t){ tb->end, 0, false, false };
    if (v->in_inv) {
        if (tb->start == v->ret_addr && v->prev1.valid && !v->prev1.store &&
            v->prev1.addr == v->ret_slot) {
            end_invocation(v);
            v->ret_addr = NO_ADDR;
        }
    } else if (tb->is_entry && v->prev1.valid) {
        const tail_t *call = v->prev1.store ? &v->prev1
                           : v->prev2.valid && v->prev2.store ? &v->prev2 : NULL;
        if (call) {
            v->ret_addr = call->end;
            v->ret_slot = call->addr;
            begin_invocation(v);
        }
    }
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    if (!atomic_load(&rebased)) {
        pthread_mutex_lock(&lock);
        if (!atomic_load(&rebased)) {
            finish_config();
            atomic_store(&rebased, true);
        }
        pthread_mutex_unlock(&lock);
    }
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0) return;
    uint64_t start = qemu_plugin_tb_vaddr(tb);
    struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
    uint64_t end = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
    bool kernel_tb = false;
    if (system_mode) {
        kernel_tb = in_ranges(kernel, n_kernel, start);
        qemu_plugin_register_vcpu_tb_exec_cb(tb, kernel_tb ? tb_exec_kernel : tb_exec_other,
                                             QEMU_PLUGIN_CB_NO_REGS, NULL);
    } else {
        tbinfo_t *info = malloc(sizeof *info);
        if (!info) abort();
        *info = (tbinfo_t){ start, end, start == entry_addr };
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_user, QEMU_PLUGIN_CB_NO_REGS, info);
        qemu_plugin_register_vcpu_mem_cb(last, tail_access, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        uintptr_t which = (pc == phase_start ? 1 : 0) | (pc == phase_end ? 2 : 0);
        if (which)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, marker, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)which);
        /* system mode: only kernel code is traced (the paper's processor-mode filter) */
        bool traced = system_mode ? kernel_tb : true;
        if (n_filter) traced = in_ranges(filter, n_filter, pc);
        if (traced && (n_objects || n_areas))
            qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, NULL);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *config = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "config=", 7)) config = argv[i] + 7;
        else { fail("unknown argument '%s' (expected config=FILE)", argv[i]); return -1; }
    }
    if (!config) { fail("missing argument config=FILE"); return -1; }
    system_mode = info->system_emulation;
    if (!read_config(config)) return -1;
    if (system_mode && n_kernel == 0) {
        fail("system mode needs 'kernel LO HI' ranges in %s", config);
        return -1;
    }
    if (!system_mode && entry_addr == NO_ADDR) {
        fail("user mode needs an 'entry ADDR' line in %s", config);
        return -1;
    }
    if (phase_start != NO_ADDR) atomic_store(&phase, PHASE_BEFORE);
    else clock_gettime(CLOCK_MONOTONIC, &phase_t0);
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
