/* cf_shlib.c - objects in static storage of profile-built shared libraries.
 *
 * A shared library linked by `cachefit cc -shared` in profile mode carries its own blob
 * (the hidden array __cachefit_shlib_blob, same text format as the executable's, see
 * docs/raw-trace-format.md) and a constructor/destructor (runtime/shlib/cf_shlib_ctor.c)
 * that call the two entry points below with it: at load (also by dlopen) the library's
 * `global` objects are registered with the library's load bias, at unload (dlclose) they
 * are forgotten.  The library uses the executable's runtime: the executable exports these
 * entry points (the profile link step adds --export-dynamic-symbol=__cachefit_* etc.).
 *
 * A library's constructors may run before the executable's (a library on the link
 * line): the runtime is initialised on demand first, so the types of the executable's
 * blob (the project file's order) get their ids before the library's names are looked up.
 *
 * This file runs only at library load and unload: it must not be called from the
 * per-access path, and must not call malloc (it may run inside a constructor before the
 * C library is fully set up).
 */
#define _GNU_SOURCE
#include "cf_internal.h"

#include <stdlib.h>
#include <string.h>

#define CF_BLOB_MAGIC "CACHEFIT-BLOB-1\n"

/* Where a `global` line's object is at run time.  "global ADDR COUNT ELEM STRIDE TYPE"
 * is at ADDR + bias; with "via GOT VAR" the variable (link-time address VAR, the object
 * at ADDR - VAR inside it) is wherever the library's GOT slot GOT points: an executable
 * that refers to the variable directly gets a copy of it (copy relocation) and the
 * library's code uses that copy (or another library's definition interposes it).  The
 * owner of such an object registers it too and keeps it after this library is gone. */
static uintptr_t cf_shlib_address(const char *s, uintptr_t addr, uintptr_t bias)
{
    char kw[8], got[32], var[32];
    s = cf_parse_word(s, kw, sizeof kw);
    if (strcmp(kw, "via") != 0)
        return addr + bias;
    s = cf_parse_word(s, got, sizeof got);
    cf_parse_word(s, var, sizeof var);
    uintptr_t slot = (uintptr_t)strtoull(got, NULL, 16) + bias;
    uintptr_t link_var = (uintptr_t)strtoull(var, NULL, 16);
    uintptr_t run_var = *(const uintptr_t *)slot;
    if (!run_var || addr < link_var)
        return addr + bias;
    return run_var + (addr - link_var);
}

/* Register (load != 0) or forget the `global` objects of a library's blob. */
static void cf_shlib_walk(const char *blob, int load)
{
    if (!blob || strncmp(blob, CF_BLOB_MAGIC, sizeof CF_BLOB_MAGIC - 1) != 0)
        return;
    cf_init(); /* the executable's blob first: its types keep the project file's ids */
    uintptr_t bias = 0;
    int have_self = 0;
    for (const char *line = blob + sizeof CF_BLOB_MAGIC - 1; *line;) {
        const char *eol = strchr(line, '\n');
        char word[16], name[CF_NAME_MAX];
        const char *s = cf_parse_word(line, word, sizeof word);
        if (strcmp(word, "self") == 0) {
            char a[32];
            cf_parse_word(s, a, sizeof a);
            bias = (uintptr_t)blob - (uintptr_t)strtoull(a, NULL, 16);
            have_self = 1;
        } else if (strcmp(word, "type") == 0 && load) {
            cf_parse_word(s, name, sizeof name);
            cf_type_id(name);
        } else if (strcmp(word, "fields") == 0 && load) {
            s = cf_parse_word(s, name, sizeof name);
            cf_fields_load(cf_type_lookup(name), s);
        } else if (strcmp(word, "global") == 0 && have_self) {
            cf_blob_global g;
            s = cf_parse_global(s, &g);
            uintptr_t addr = cf_shlib_address(s, g.addr, bias);
            if (load)
                cf_register(addr, g.count, g.elem, g.stride, g.type, 0);
            else if (addr == g.addr + bias) /* not an object someone else holds */
                cf_forget(addr, g.type);
        }
        if (!eol)
            break;
        line = eol + 1;
    }
}

/* Called by a profile-built library's constructor with its blob. */
void __cachefit_shlib_load(const char *blob)
{
    cf_shlib_walk(blob, 1);
}

/* Called by its destructor (dlclose, or exit after the trace is written). */
void __cachefit_shlib_unload(const char *blob)
{
    cf_shlib_walk(blob, 0);
}
