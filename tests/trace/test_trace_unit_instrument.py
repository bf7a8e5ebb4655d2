"""Edits computed from the AST of a preprocessed unit (no program is run here)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.errors import ParseError
from cachefit.model.project_config import TraceConfig
from cachefit.trace.unit_instrument import instrument_preprocessed

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None, reason="needs clang-19")


def preprocess(tmp: Path, code: str, lang: str = "c", compiler: str = "clang-19") -> bytes:
    src = tmp / ("u.cc" if lang == "c++" else "u.c")
    src.write_text(code)
    out = subprocess.run([compiler, "-E", str(src)], capture_output=True, check=True).stdout
    return out


def user_part(text: bytes) -> str:
    """The edited code after the last system-header line marker."""
    s = text.decode()
    return s[s.rfind('u.c'):]


C_UNIT = """
#include <stdlib.h>
typedef struct obj { int a; long b; } obj_t;
struct outer { int x; struct obj o[2]; };
struct obj *f(int n) {
  struct obj *p = malloc(sizeof(struct obj));
  obj_t *q = calloc(n, sizeof(obj_t));
  struct obj *r = malloc(sizeof *r);
  struct obj *s = malloc(n * sizeof(struct obj));
  struct obj **pp = malloc(sizeof(struct obj *));
  struct outer *o = malloc(sizeof(struct outer));
  char *text = malloc(100);
  q = realloc(q, 2 * sizeof *q);
  free(r); free(pp); free(text); free(o); free(s);
  return p;
}
int op(struct obj *x) { if (x->a) return 1; return x->a + 2; }
"""


def test_c_allocation_sites_and_entry(tmp_path: Path) -> None:
    text = preprocess(tmp_path, C_UNIT)
    trace = TraceConfig(types=("obj",), entry=("op",))
    out, rep = instrument_preprocessed(text, "c", trace)
    code = user_part(out)
    assert "__cachefit_malloc(sizeof(struct obj), &__cachefit_site_0)" in code
    assert "__cachefit_calloc(n, sizeof(obj_t), &__cachefit_site_0)" in code
    assert "__cachefit_malloc(sizeof *r, &__cachefit_site_0)" in code
    assert "__cachefit_malloc(n * sizeof(struct obj), &__cachefit_site_0)" in code
    assert "malloc(sizeof(struct obj *))" in code          # a pointer, not an object
    assert "__cachefit_malloc(sizeof(struct outer), &__cachefit_site_1)" in code
    assert "char *text = malloc(100)" in code
    assert "__cachefit_realloc(q, 2 * sizeof *q, &__cachefit_site_0)" in code
    assert code.count("__cachefit_free(") == 5
    assert ("int op(struct obj *x) { __attribute__((cleanup(__cachefit_leave))) int "
            "__cachefit_scope = __cachefit_enter(0, &__cachefit_scope); if") in code
    prologue = out.decode().split("# ")[0]
    # struct outer: two objs at offset 8, 16 bytes apart
    assert '{8ul, 2ul, 16ul, 16ul, "obj"}' in prologue
    assert '{0ul, 1ul, 16ul, 16ul, "obj"}' in prologue
    assert rep.entries == ["op"] and rep.allocation_sites == 6 and rep.frees == 6
    # The edited unit compiles.
    unit = tmp_path / "e.i"
    unit.write_bytes(out)
    subprocess.run(["clang-19", "-c", "-x", "cpp-output", str(unit), "-o",
                    str(tmp_path / "e.o"), "-Wall", "-Wextra", "-Werror"], check=True)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_largest_instrumented_function_is_reported(tmp_path: Path) -> None:
    # cachefit.trace.sancov_inline does not inline the checks into a unit with a huge one.
    text = preprocess(tmp_path, C_UNIT)
    _out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("op",)))
    name, size = rep.largest_function
    assert name == "f" and 100 < size < 400
    trace = TraceConfig(types=("obj",), entry=("op",), instrument=("op",))
    _out, rep = instrument_preprocessed(text, "c", trace)
    assert rep.largest_function[0] == "op"


def test_gcc_preprocessed_c_is_accepted(tmp_path: Path) -> None:
    text = preprocess(tmp_path, C_UNIT, compiler="gcc")
    out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("op",)))
    assert rep.allocation_sites == 6
    unit = tmp_path / "e.i"
    unit.write_bytes(out)
    subprocess.run(["gcc", "-c", "-x", "cpp-output", str(unit), "-o", str(tmp_path / "e.o")],
                   check=True)


CXX_UNIT = """
#include <cstdlib>
#include <new>
namespace k {
class tcb { public: long s; tcb(); ~tcb(); long get() const { return s; } };
tcb::tcb() { s = 0; }
tcb::~tcb() { s = 1; }
}
struct plain { int a; };
int ipc(k::tcb *a, k::tcb *b) { return (int)(a->get() + b->s); }
void g(int n) {
  plain *p = new plain; plain *v = new plain[n]; plain *w = new plain[n++];
  delete p; delete[] v; delete[] w;
  k::tcb *t = new k::tcb(); delete t;
  void *m = std::malloc(sizeof(plain)); std::free(m);
}
"""


def test_cxx_constructors_new_delete(tmp_path: Path) -> None:
    text = preprocess(tmp_path, CXX_UNIT, "c++")
    trace = TraceConfig(types=("k::tcb", "plain"), entry=("ipc",))
    out, rep = instrument_preprocessed(text, "c++", trace, ["-std=c++17"])
    code = out.decode()[out.decode().rfind("u.cc"):]
    assert "tcb::tcb() { __cachefit_ctor(this, &__cachefit_site_" in code
    # the definition's name (issue 27: `k::tcb@FP`, FP = fingerprint(8, [("s", 0)]))
    assert ('tcb::~tcb() { __cachefit_dtor_guard __cachefit_g = {this, "k::tcb@393560f1"};'
            in code)
    assert "__cachefit_track_t(new plain, 4ul, &__cachefit_site_" in code
    assert "__cachefit_track_t(new plain[n], (n) * 4ul, &__cachefit_site_" in code
    assert "plain *w = new plain[n++]" in code            # side effects: left alone
    assert "delete __cachefit_untrack_t(p)" in code and "delete[] __cachefit_untrack_t(v)" in code
    assert "__cachefit_malloc(sizeof(plain), &__cachefit_site_" in code
    assert "__cachefit_free(m)" in code
    assert rep.constructors == 1 and rep.destructors == 1 and rep.entries == ["ipc"]
    assert any("side effects" in w for w in rep.warnings)
    unit = tmp_path / "e.ii"
    unit.write_bytes(out)
    subprocess.run(["clang++-19", "-std=c++17", "-c", "-x", "c++-cpp-output", str(unit), "-o",
                    str(tmp_path / "e.o"), "-Wall", "-Wextra", "-Werror"], check=True)


def test_system_headers_are_not_edited(tmp_path: Path) -> None:
    text = preprocess(tmp_path, "#include <stdlib.h>\nstruct obj { int a; };\n"
                                 "void h(void *p) { free(p); }\n")
    out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("op",)))
    head = out.decode()
    body = head[head.index("# 1 "):]          # after the prologue
    assert body.count("__cachefit_free(") == 1 and rep.frees == 1
    assert "extern void free (void *__ptr)" in head


def test_errors_in_user_code_are_reported(tmp_path: Path) -> None:
    text = b'# 1 "bad.c"\nint f(void) { return undeclared_thing; }\n'
    with pytest.raises(ParseError) as exc:
        instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("f",)),
                                source="bad.c")
    assert any("bad.c:1" in d and "undeclared_thing" in d for d in exc.value.details)


def test_unit_without_targets_is_unchanged(tmp_path: Path) -> None:
    text = preprocess(tmp_path, "int add(int a, int b) { return a + b; }\n")
    out, rep = instrument_preprocessed(text, "c", TraceConfig(types=("obj",), entry=("op",)))
    assert out == text and not rep.edited


def test_defaulted_constructor_is_left_alone(tmp_path: Path) -> None:
    """`priv() = default;` has no braces: nothing may be inserted after `= default`
    (that was a compile error); the user-written constructor still registers."""
    code = ("class priv { int a; char c; public: priv() = default; "
            "priv(int x, char y) : a(x), c(y) {} ~priv() = default; };\n"
            "priv p; int main() { p = priv(2, 1); priv q; (void)q; return 0; }\n")
    text = preprocess(tmp_path, code, "c++", "clang++-19")
    out, rep = instrument_preprocessed(text, "c++", TraceConfig(types=("priv",), entry=()))
    assert rep.constructors == 1
    edited = tmp_path / "edited.ii"
    edited.write_bytes(out)
    # The edited unit must still compile (declarations of the runtime come from the edit).
    proc = subprocess.run(["clang++-19", "-fsyntax-only", "-x", "c++-cpp-output", str(edited)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


FLEX_UNIT = """
#include <stddef.h>
#include <stdlib.h>
typedef struct S { int a; long n; char data[1]; } S;
struct obj { int a; long b; };
void *alloc(void *ud, int tag, size_t sz);
S *mk(size_t l) { size_t total; total = offsetof(S, data) + (l + 1) * sizeof(char);
                  return alloc(0, 1, total); }
S *mk2(size_t l) { return alloc(0, 2, (l + 1) * sizeof(char) + offsetof(S, data)); }
S *mk3(size_t l) { size_t total = offsetof(S, data) + l; total += 8; return alloc(0, 3, total); }
S *mk4(size_t l) { return alloc(0, 4, offsetof(S, a) + l); }
struct obj *mk5(size_t n) { size_t sz = n * sizeof(struct obj); return malloc(sz); }
S *mk6(int c, size_t l) { size_t t = sizeof(S); if (c) t = offsetof(S, data) + l; else t = 4;
                          return alloc(0, 6, t); }
S *mk7(size_t l) { size_t t = offsetof(S, data) + l; size_t *p = &t; *p = 1;
                   return alloc(0, 7, t); }
"""


def test_sizes_through_offsetof_and_local_variables(tmp_path: Path) -> None:
    """One S with a trailing array: `offsetof(S, last) + extra`, also through a local
    variable all of whose assignments have that form; a variable that is changed
    otherwise (`+=`, its address taken) or holds different forms is not followed."""
    text = preprocess(tmp_path, FLEX_UNIT)
    trace = TraceConfig(types=("S", "obj"), entry=("op",), allocators=("alloc",))
    out, rep = instrument_preprocessed(text, "c", trace)
    code = user_part(out)
    assert "__cachefit_track((alloc(0, 1, total)), (24), &__cachefit_site_0)" in code
    assert "__cachefit_track((alloc(0, 2, (l + 1) * sizeof(char) + " in code
    for n in (3, 4, 6, 7):
        assert f"return alloc(0, {n}, " in code        # not registered
    assert "__cachefit_malloc(sz, &__cachefit_site_1)" in code
    assert rep.allocation_sites == 3
    unit = tmp_path / "e.i"
    unit.write_bytes(out)
    subprocess.run(["clang-19", "-c", "-x", "cpp-output", str(unit), "-o",
                    str(tmp_path / "e.o"), "-Wall", "-Werror"], check=True)


HEADER_UNIT = """
#include <stdlib.h>
#include <stddef.h>
typedef struct obj { int a; long b; } obj;
typedef struct hdr { void *owner; obj *items; int n; } hdr;
typedef struct flex { obj o; int n; int data[]; } flex;
void *alloc(void *db, long n);
#define ROUND8(x) (((x)+7)&~7)
hdr *mk1(long n) { long nb = ROUND8(sizeof(hdr)) + sizeof(obj)*(n+1);
                   return (hdr *)alloc(0, nb); }
hdr *mk2(long n) { return (hdr *)malloc(sizeof(hdr) + n * sizeof(obj)); }
hdr *mk3(long n) { return (hdr *)alloc(0, offsetof(hdr, n) + n * sizeof(obj)); }
obj *mk4(long n) { return alloc(0, n * sizeof(obj) + 16); }
flex *mk5(long n) { return alloc(0, sizeof(flex) + n * sizeof(int)); }
obj *mk6(long n) { return malloc(n * sizeof(obj) + n * sizeof(char)); }
"""


def test_an_array_behind_a_header_is_not_registered_at_the_start(tmp_path: Path) -> None:
    """`sizeof(Hdr) + n * sizeof(X)` (SQLite's sqlite3VdbeAllocUnpackedRecord: the Mem
    array follows an UnpackedRecord in one block): the X objects do not start at the
    block, so neither `malloc` nor a configured allocator registers an X there (before,
    one X was registered over the header). An X array with untyped slack (`n *
    sizeof(X) + 16`, `+ n * sizeof(char)`) and one X with a trailing array of ints stay
    registered."""
    text = preprocess(tmp_path, HEADER_UNIT)
    trace = TraceConfig(types=("obj",), entry=("op",), allocators=("alloc",))
    out, rep = instrument_preprocessed(text, "c", trace)
    code = user_part(out)
    assert "return (hdr *)alloc(0, nb);" in code
    assert "return (hdr *)malloc(sizeof(hdr) + n * sizeof(obj));" in code
    assert "return (hdr *)alloc(0, __builtin_offsetof(hdr, n) + n * sizeof(obj));" in code
    assert "__cachefit_track((alloc(0, n * sizeof(obj) + 16)), (" in code
    assert "__cachefit_track((alloc(0, sizeof(flex) + n * sizeof(int))), (" in code
    assert "__cachefit_malloc(n * sizeof(obj) + n * sizeof(char), &__cachefit_site_" in code
    assert rep.allocation_sites == 3
