"""Allocations kept in a local variable of a header type and converted to the object's own
type through a union member or a cast (Lua's `GCObject *o = luaC_newobj(L, LUA_VTABLE,
sizeof(Table)); Table *t = gco2t(o);`, issue 27): registered with no `allocators` when
the size names the type the conversion produces, and only then."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_trace_typed_alloc import COMPILERS
from trace_helpers import build, needs_clang, seqs

from cachefit.model.project_config import TraceConfig
from cachefit.trace.unit_instrument import instrument_preprocessed

R, W = "r", "w"
ENTRY = ["tab_add", "tab_sum", "mark_all"]
TAB = {
    # tab_add: t->n++, t->sum += v (a twice, b once)
    ((0, 12, 4, R), (0, 12, 4, W), (0, 16, 8, R), (0, 16, 8, W)): 3,
    ((0, 16, 8, R),): 2,                                    # tab_sum(a), tab_sum(b)
    # mark_all over the list s -> b -> a through `struct hdr *`: marked, then next, of
    # each tab (the str is not traced)
    ((0, 9, 1, W), (0, 0, 8, R), (1, 9, 1, W), (1, 0, 8, R)): 1,
}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_header_allocation_converted_through_a_union(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["gc_union.c"], types=["tab"], entry=ENTRY, compiler=compiler)
    assert b.run() == "7 5 5\n"
    p = b.trace()
    assert seqs(p, "tab") == TAB
    assert p.types["tab"].outside_objects == 0
    assert p.invocations == 6
    assert p.metadata["registered"] == {"tab": 2}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_size_of_another_type_registers_nothing(tmp_path: Path, compiler: str) -> None:
    """The same program with tab_new asking for sizeof(str) bytes (still converted to
    `tab *`): the conversion alone is no evidence, no tab is registered."""
    b = build(tmp_path, ["gc_union.c"], types=["tab"], entry=ENTRY, compiler=compiler,
              flags=("-O0", "-g", "-DWRONG_SIZE"))
    assert b.run() == "7 5 5\n"
    p = b.trace()
    assert seqs(p, "tab") == {}
    assert p.invocations == 6
    assert p.metadata["registered"].get("tab", 0) == 0


UNIT = b"""
typedef unsigned long size_t;
#define CommonHeader struct hdr *next; unsigned char tt; unsigned char marked
typedef struct hdr { CommonHeader; } hdr;
typedef struct tab { CommonHeader; unsigned char flags; int n; long sum; } tab;
typedef struct str { CommonHeader; int len; char data[16]; } str;
typedef struct lcl { CommonHeader; int nup; } lcl;
typedef struct ccl { CommonHeader; int nup; void *f; } ccl;
struct wrap { tab t; int extra; };
union cl { lcl l; ccl c; };
union obj_u { hdr gc; tab h; str s; union cl cl; };
#define cast_u(o) ((union obj_u *)(o))
hdr *newobj(int tt, size_t sz);
void *vnew(size_t sz);
void keep(hdr **);
/* registered */
tab *f1(void) { hdr *o = newobj(1, sizeof(tab)); tab *t = &cast_u(o)->h; return t; }
lcl *f2(void) { hdr *o = newobj(1, sizeof(lcl)); return &cast_u(o)->cl.l; }
tab *f3(void) { hdr *o = newobj(1, sizeof(tab)); return (tab *)(void *)o; }
int f4(void) { hdr *o; o = newobj(1, sizeof(tab)); cast_u(o)->h.n = 1; return o->tt; }
tab *f5(void) { void *v = vnew(sizeof(tab)); tab *t = v; return t; }
/* not registered */
tab *g1(void) { hdr *o = newobj(1, sizeof(str)); return &cast_u(o)->h; }
tab *g2(int k) { hdr *o = newobj(1, sizeof(tab)); str *s = &cast_u(o)->s; s->len = k;
                 return &cast_u(o)->h; }
tab *g3(hdr *p) { hdr *o = newobj(1, sizeof(tab)); if (p) o = p; return &cast_u(o)->h; }
tab *g4(void) { static hdr *o; o = newobj(1, sizeof(tab)); return &cast_u(o)->h; }
tab *g5(void) { hdr *o = newobj(1, sizeof(tab)); keep(&o); return &cast_u(o)->h; }
tab *g6(void) { hdr *o = newobj(1, sizeof(tab)); return &((struct wrap *)o)->t; }
int g7(void) { hdr *o = newobj(1, sizeof(tab)); return o->tt; }
"""


@needs_clang
def test_which_conversions_register() -> None:
    """Registered: the only value of a local converted to exactly the sized type, through a
    union member (nested unions too) or a cast chain, in C also implicitly from `void *`.
    Not: a size of another type, two record views, a variable with another value (or
    static, or its address taken), a member of a struct (a view of the struct), no view."""
    out, report = instrument_preprocessed(UNIT, "c", TraceConfig(types=["tab", "lcl"],
                                                                 entry=[]))
    text = out.decode()
    registered = [line.split("(")[0].split()[-1].lstrip("*") for line in text.splitlines()
                  if "__cachefit_track((" in line and not line.startswith("void *")]
    assert registered == ["f1", "f2", "f3", "f4", "f5"]
    assert report.allocation_sites == 5
    kinds = {(n.type_name, n.kind) for n in report.site_notes}
    # g2..g7 are noted as sites `allocators` would register (sizeof(tab), not a tab *)
    assert kinds == {("tab", "typed"), ("lcl", "typed"), ("tab", "unconverted")}


CXX_UNIT = b"""
typedef unsigned long size_t;
struct hdr { hdr *next; unsigned char tt; };
struct tab { hdr *next; unsigned char tt; int n; };
struct str { hdr *next; unsigned char tt; int len; };
union gcu { hdr gc; tab h; str s; };
hdr *newobj(int tt, size_t sz);
tab *f1() { hdr *o = newobj(1, sizeof(tab)); return &reinterpret_cast<gcu *>(o)->h; }
tab *f2() { hdr *o = newobj(1, sizeof(tab)); return static_cast<tab *>(static_cast<void *>(o)); }
tab *g1() { auto *o = newobj(1, sizeof(tab)); str *s = &reinterpret_cast<gcu *>(o)->s;
            (void)s; return reinterpret_cast<tab *>(o); }
"""


@needs_clang
def test_cxx_casts_register(tmp_path: Path) -> None:
    """C++: reinterpret_cast to the union then the member, a static_cast chain through
    `void *`; an `auto *` local viewed as two records is not registered. The edited unit
    compiles."""
    out, report = instrument_preprocessed(CXX_UNIT, "c++", TraceConfig(types=["tab"],
                                                                       entry=[]))
    lines = [line for line in out.decode().splitlines() if "newobj(1" in line]
    assert [("__cachefit_track_t(newobj(1, sizeof(tab)), (sizeof(tab))" in line)
            for line in lines] == [True, True, False]
    assert report.allocation_sites == 2
    unit = tmp_path / "unit.ii"
    unit.write_bytes(out)
    subprocess.run(["clang++-19", "-fsyntax-only", str(unit)], check=True)
