"""Allocation sites found without `allocators` in cachefit.toml, and the note that names
the sites cachefit did not register (issue 27).

The programs are built in profile mode and traced; the profiles are exact, and the
profile of the typed sites found automatically equals the one with the allocators and
the deallocator named by hand.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import CACHEFIT, HAVE_CLANG, build, compiler_params, needs_clang, run, seqs

from cachefit.model.profile import load
from cachefit.model.project_config import TraceConfig
from cachefit.trace.alloc_sites import SiteNote, parse_section, type_notes
from cachefit.trace.unit_instrument import instrument_preprocessed

R, W = "r", "w"
ENTRY = ["set_a", "set_b", "set_c", "get_b"]
TYPED = {
    ((0, 0, 4, W),): 2,      # the `sizeof *o` wrapper, and an element of its n * sizeof array
    ((0, 8, 8, W),): 1,      # the function-pointer allocator (ZALLOC)
    ((0, 16, 1, W),): 1,     # the two-level macro over mem_alloc over xmalloc
    ((0, 8, 8, R),): 1,      # the pool's pool_get(p, sizeof *c)
}
HAND_NAMED = ('allocators = ["zalloc", "xmalloc", "mem_alloc", "pool_get"]\n'
              'deallocators = ["xfree"]\n')
COMPILERS = compiler_params("clang-19", "gcc")


@pytest.mark.parametrize("compiler", COMPILERS)
def test_typed_sites_equal_hand_named_allocators(tmp_path: Path, compiler: str) -> None:
    """A function-pointer allocator behind a macro, a `sizeof *p` wrapper (with a header,
    and a free wrapper that frees `(char *)p - HDR`), a macro over a wrapper over it, and
    a pool's `pool_get(p, sizeof *c)`: every object is found with no `allocators`, the
    freed ones are forgotten, and the profile is the hand-named one."""
    auto = tmp_path / "auto"
    named = tmp_path / "named"
    auto.mkdir()
    named.mkdir()
    a = build(auto, ["typed_alloc.c"], types=["obj"], entry=ENTRY, compiler=compiler)
    n = build(named, ["typed_alloc.c"], types=["obj"], entry=ENTRY, compiler=compiler,
              config_extra=HAND_NAMED)
    assert a.run() == n.run() == "32\n"
    pa, pn = a.trace(), n.trace()
    assert seqs(pa, "obj") == TYPED
    assert seqs(pn, "obj") == TYPED
    assert pa.invocations == pn.invocations == 7
    assert pa.types["obj"].outside_objects == pn.types["obj"].outside_objects == 0


@needs_clang
def test_missed_objects_are_named_with_the_line_to_add(tmp_path: Path) -> None:
    """A type no registered object of which was touched: `cachefit trace` names the
    allocation site that was not registered (file:line, the function) and the
    `allocators` line; with that line the objects are found and the note is gone."""
    first = tmp_path / "first"
    first.mkdir()
    b = build(first, ["missed_alloc.c"], types=["obj"], entry=["op"])
    proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", str(b.program)], first, b.env)
    assert "cachefit: note: obj: no object of obj was registered" in proc.stderr
    assert "missed_alloc.c:28 (pool_get)" in proc.stderr
    assert 'add `allocators = ["pool_get"]` to [trace] in cachefit.toml' in proc.stderr
    assert seqs(b.trace(), "obj") == {}

    second = tmp_path / "second"
    second.mkdir()
    b2 = build(second, ["missed_alloc.c"], types=["obj"], entry=["op"],
               config_extra='allocators = ["pool_get"]\n')
    proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", str(b2.program)], second, b2.env)
    assert "no object of obj" not in proc.stderr and "allocators" not in proc.stderr
    assert seqs(b2.trace(), "obj") == {((0, 8, 8, W),): 1}


def test_notes_of_a_touched_type_name_unregistered_sites_only() -> None:
    notes = [SiteNote("obj", "a.c", 3, "malloc", "malloc"),
             SiteNote("obj", "b.c", 9, "pool_get", "unconverted"),
             SiteNote("obj", "c.c", 1, "grab", "unsized"),
             SiteNote("other", "d.c", 2, "pool_get", "unconverted")]
    assert type_notes("obj", True, notes[:1]) == []
    (note,) = type_notes("obj", True, notes)
    assert note.startswith("obj: objects from allocation sites that cachefit does not register")
    assert "b.c:9 (pool_get)" in note and "c.c:1" not in note
    (note,) = type_notes("obj", False, notes)
    assert "a.c:3 (malloc)" in note and "b.c:9 (pool_get)" in note and "c.c:1 (grab)" in note
    assert "d.c" not in note
    (note,) = type_notes("gone", False, notes)
    assert "the build shows no allocation site of gone" in note


def test_notes_tell_unregistered_from_untouched() -> None:
    """With the runtime's count of registered objects (issue 27): none registered, some
    registered but none touched, or unknown (a raw trace without `objects` lines)."""
    notes = [SiteNote("obj", "a.c", 3, "malloc", "malloc"),
             SiteNote("obj", "b.c", 9, "pool_get", "unconverted")]
    (note,) = type_notes("obj", False, notes, registered=0)
    assert note.startswith("obj: no object of obj was registered; ")
    assert "a.c:3 (malloc) (none of them ran)" in note
    assert 'add `allocators = ["pool_get"]`' in note
    (note,) = type_notes("obj", False, notes, registered=3)
    assert note.startswith("obj: 3 objects of obj were registered, but none was touched "
                           "during an invocation; check that the [trace] entry functions")
    assert "allocators" not in note
    (note,) = type_notes("obj", False, [], registered=1)
    assert note.startswith("obj: 1 object of obj was registered, but none was touched")
    (note,) = type_notes("obj", False, notes)
    assert note.startswith("obj: no object of obj was touched during an invocation; ")


@needs_clang
def test_registered_objects_no_invocation_touched(tmp_path: Path) -> None:
    """The objects are registered (pool_get named as an allocator) but the entry function
    (pool_get itself) never touches one: the note says so instead of naming sites
    (issue 27); the profile counts the registered objects."""
    b = build(tmp_path, ["missed_alloc.c"], types=["obj"], entry=["pool_get"],
              config_extra='allocators = ["pool_get"]\n')
    proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", str(b.program)], tmp_path, b.env)
    assert ("cachefit: note: obj: 1 object of obj was registered, but none was touched "
            "during an invocation") in proc.stderr
    assert "allocators = " not in proc.stderr
    prof = load(tmp_path / "p.json")
    assert prof.invocations == 1
    assert prof.metadata["registered"] == {"obj": 1}


# --------------------------------------------------------------------------- the edits

UNIT = """
#include <stdlib.h>
#include <string.h>
struct obj { int a; long b; };
struct holder { int n; struct obj o; };
void *alloc(size_t n);
void *copy(void *dst, const void *src, size_t n);
void *grow(void *old, size_t n);
void *get(void *tab, int i);
struct obj *f(struct obj *src, int n) {
  struct obj *p = malloc(sizeof *p);
  struct obj *q = memcpy(p, src, sizeof *p);
  struct obj *r = copy(p, src, sizeof(struct obj));
  struct obj *g = grow(p, n * sizeof *g);
  void *raw = alloc(sizeof(struct obj));
  struct obj *t = get(0, 3);
  struct holder *h = alloc(sizeof *h);
  char buf[64]; struct obj *s = (struct obj *)alloc(sizeof(buf));
  struct obj *v; v = alloc(n * sizeof(v[0]));
  (void)q; (void)r; (void)g; (void)raw; (void)t; (void)h; (void)s; (void)v;
  return p;
}
struct obj *mk(void) { return alloc(sizeof(struct obj)); }
void rel(void *ptr) { free((char *)ptr - 8); }
void rel_local(void *ptr) { char *real = (char *)ptr - 8; free(real); }
void rel_moved(void *ptr) { ptr = (char *)ptr + 1; free((char *)ptr - 8); }
struct list { struct obj *items; };
void clear(struct list *l) { free(l->items); }
typedef void *(*realloc_fn)(void *ud, void *p, size_t o, size_t n);
struct G { realloc_fn frealloc; void *ud; };
void drop(struct G *g, struct holder *h) {
  (*g->frealloc)(g->ud, (char *)h + 0, sizeof(struct holder), 0);
  (void)g->frealloc(g->ud, h, sizeof(struct holder), 0);
  if (h) { alloc(sizeof(struct obj)); }
}
"""


@pytest.mark.skipif(not HAVE_CLANG, reason="needs clang-19")
@pytest.mark.parametrize("compiler", ["clang-19", "gcc"])
def test_typed_site_edits(tmp_path: Path, compiler: str) -> None:
    """Which calls are registered, which are noted only, and which free wrappers forget
    their parameter; calls whose result is discarded (Lua's free of its main block,
    `(*g->frealloc)(g->ud, fromstate(L), sizeof(LG), 0);`) are not noted; the edited
    unit compiles without warnings."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    src = tmp_path / "u.c"
    src.write_text(UNIT)
    text = subprocess.run([compiler, "-E", str(src)], capture_output=True, check=True).stdout
    out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("f",)))
    code = out.decode()
    code = code[code.rfind("u.c"):]
    assert "= __cachefit_malloc(sizeof *p, &__cachefit_site_0)" in code   # once, not twice
    assert "memcpy(p, src, sizeof *p)" in code and "__cachefit_track((__cachefit_memcpy" \
        not in code
    for kept in ("= copy(p, src, sizeof(struct obj));", "= grow(p, n * sizeof *g);",
                 "void *raw = alloc(sizeof(struct obj));", "= get(0, 3);",
                 "(struct obj *)alloc(sizeof(buf));"):
        assert kept in code
    assert "__cachefit_track((alloc(sizeof *h)), (sizeof *h), &__cachefit_site_" in code
    assert "__cachefit_track((alloc(n * sizeof(v[0]))), (n * sizeof(v[0]))," in code
    assert "return ((__typeof__(alloc(sizeof(struct obj))))__cachefit_track(" in code
    assert "__cachefit_free(((void)__cachefit_untrack(ptr), (char *)ptr - 8))" in code
    assert "__cachefit_free(((void)__cachefit_untrack(ptr), real))" in code
    assert "__cachefit_free((char *)ptr - 8); }" in code      # ptr changed: not forgotten
    assert "__cachefit_free(l->items)" in code                # a member: not the object
    kinds = sorted((n.line, n.callee, n.kind) for n in rep.site_notes)
    assert kinds == [(11, "malloc", "malloc"), (13, "copy", "passes"),
                     (14, "grow", "passes"), (15, "alloc", "unconverted"),
                     (16, "get", "unsized"), (17, "alloc", "typed"), (18, "alloc", "unsized"),
                     (19, "alloc", "typed"), (23, "alloc", "typed")]
    assert rep.allocation_sites == 4
    # typed sites never register an object on the stack (flag 2); malloc's may not be
    # there; flag 8: the unit names obj's definition (`obj@FP`, issue 27 item 4)
    assert ", 10ul, 1ul, __cachefit_occ_" in out.decode()
    unit = tmp_path / "e.i"
    unit.write_bytes(out)
    obj = tmp_path / "e.o"
    subprocess.run([compiler, "-c", "-x", "cpp-output", str(unit), "-o", str(obj), "-Wall",
                    "-Wextra", "-Werror", "-Wno-unused-parameter"], check=True)
    subprocess.run(["objcopy", f"--dump-section=.cachefit.sites={tmp_path / 'sites.bin'}",
                    str(obj), str(tmp_path / "copy.o")], check=True)
    assert parse_section((tmp_path / "sites.bin").read_bytes()) == rep.site_notes


CXX_UNIT = """
#include <cstdlib>
#include <cstring>
struct obj { int a; long b; };
void *alloc(std::size_t n);
struct Pool { void *get(std::size_t n); };
obj *f(Pool &p, int n) {
  obj *a = static_cast<obj *>(alloc(sizeof(obj)));
  obj *b = (obj *)p.get(n * sizeof *b);
  auto c = reinterpret_cast<obj *>(p.get(sizeof(obj)));
  obj *d = static_cast<obj *>(std::memcpy(a, b, sizeof *a));
  (void)c; (void)d;
  return b;
}
void rel(void *ptr) { std::free(static_cast<char *>(ptr) - 8); }
"""


@pytest.mark.skipif(not HAVE_CLANG, reason="needs clang-19")
@pytest.mark.parametrize("compiler", ["clang++-19", "g++"])
def test_typed_site_edits_cxx(tmp_path: Path, compiler: str) -> None:
    """C++: casts of a function's and a member function's result, through the template
    helper; the C library's memcpy is not an allocation; the edited unit compiles."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    src = tmp_path / "u.cc"
    src.write_text(CXX_UNIT)
    text = subprocess.run([compiler, "-E", str(src)], capture_output=True, check=True).stdout
    out, rep = instrument_preprocessed(text, "c++", TraceConfig(types=("obj",), entry=("f",)))
    code = out.decode()
    code = code[code.rfind("u.cc"):]
    assert "static_cast<obj *>(__cachefit_track_t(alloc(sizeof(obj)), (sizeof(obj))," in code
    assert "(obj *)__cachefit_track_t(p.get(n * sizeof *b), (n * sizeof *b)," in code
    assert "reinterpret_cast<obj *>(__cachefit_track_t(p.get(sizeof(obj)), " in code
    assert "static_cast<obj *>(__cachefit_memcpy(a, b, sizeof *a))" in code
    assert "__cachefit_free(((void)__cachefit_untrack(ptr), static_cast<char *>(ptr) - 8))" \
        in code
    assert sorted((n.line, n.callee, n.kind) for n in rep.site_notes) == [
        (8, "alloc", "typed"), (9, "get", "typed"), (10, "get", "typed")]
    unit = tmp_path / "e.ii"
    unit.write_bytes(out)
    subprocess.run([compiler, "-c", "-x", "c++-cpp-output", str(unit), "-o",
                    str(tmp_path / "e.o"), "-Wall", "-Wextra", "-Werror"], check=True)


@needs_clang
def test_pool_recarving_forgets_stale_objects(tmp_path: Path) -> None:
    """A pool carving objects at other offsets of one buffer, never freeing (issue 27):
    each new object forgets the older ones it overlaps, of its type or another (a
    partly overlapping obj, an array it starts off the grid of, an obj under an
    `other`), so every access is attributed to the object the code used."""
    b = build(tmp_path, ["pool_recarve.c"], types=["obj", "other"], entry=["op", "op_other"])
    assert b.run() == "1 2\n"
    prof = b.trace()
    assert seqs(prof, "obj") == {((0, 8, 8, W),): 4}
    assert seqs(prof, "other") == {((0, 8, 8, W),): 1}
    assert prof.invocations == 5
    assert prof.types["obj"].outside_objects == prof.types["other"].outside_objects == 0


VARIADIC = """\
#include <stddef.h>
struct obj { long a; int b; };
char *catprintf(char *s, const char *fmt, ...);
void *vnew(size_t size, ...);
char *show(char *s) { return catprintf(s, "obj:%d ", (int)sizeof(struct obj)); }
void *make(void) { return vnew(sizeof(struct obj), 1, 2); }
"""


@pytest.mark.skipif(not HAVE_CLANG, reason="needs clang-19")
def test_a_size_among_variadic_arguments_is_no_allocation_size(tmp_path: Path) -> None:
    """Redis's `sdscatprintf(sizes, "robj:%d ", (int)sizeof(robj))` (debug.c) was noted as
    a robj allocation site to add to `allocators`: a `...` argument is no size. A variadic
    function's declared size parameter still is."""
    src = tmp_path / "v.c"
    src.write_text(VARIADIC)
    text = subprocess.run(["clang-19", "-E", str(src)], capture_output=True,
                          check=True).stdout
    _out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("f",)))
    assert sorted((n.line, n.callee, n.kind) for n in rep.site_notes) == \
        [(6, "vnew", "unconverted")]
