"""A base class's object and its derived object at one address: each access counts for
every traced object that holds it (issue 27, item 4; bench/projects/RESULTS.md, tinyxml2).

tests/trace/programs/base_derived.cc: `Base` (a 0, b 8, c 16; 24 bytes) and `Derived :
Base` (d 24, e 32; 40 bytes), both traced. A `new Derived()` is registered as Derived (the
new-expression and Derived's constructor) and as Base (Base's constructor) at one address.
Before, an access to a base member counted for whichever of the two the runtime's object
cache had resolved last (here Derived: Base's profile lacked every access made through the
Derived object, as XMLNode's lacked about half of its in tinyxml2). Now an access inside
the base part counts for Base's role (its layout serves every derived object) and for
Derived's (whose lines include the base part); one outside it for Derived only. Each type
numbers its own roles by first touch. `Tail : Base` has its member t in Base's tail
padding (offset 20 of 24): Base's object, which Tail's constructor registers, ends at 20
(where Base's data ends), so a write of t counts for Tail only, not as a write into
Base's padding. Exact profiles with clang++-19 (at -O0, and at -O2 with the inlined
checks) and g++ (the tsan callbacks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import HAVE_CLANG, HAVE_GCC, build

from cachefit.model.profile import Profile

R, W = "r", "w"
ENTRY = ["touch_derived", "touch_base", "touch_two", "touch_tail"]
# touch_derived(obj) 3 times: writes a, reads b (base part), writes d, reads e
# touch_base(obj) twice and touch_base(plain) once: writes c, reads a
# touch_two(plain, obj): writes plain's a, then obj's b
# touch_tail(tail): writes t (Tail only), then c
BASE = {
    ("touch_derived", ((0, 0, 8, W), (0, 8, 8, R))): 3,
    ("touch_base", ((0, 16, 4, W), (0, 0, 8, R))): 3,
    ("touch_two", ((0, 0, 8, W), (1, 8, 8, W))): 1,
    ("touch_tail", ((0, 16, 4, W),)): 1,
}
DERIVED = {
    ("touch_derived", ((0, 0, 8, W), (0, 8, 8, R), (0, 24, 8, W), (0, 32, 8, R))): 3,
    ("touch_base", ((0, 16, 4, W), (0, 0, 8, R))): 2,
    ("touch_two", ((0, 8, 8, W),)): 1,
}
TAIL = {("touch_tail", ((0, 20, 4, W), (0, 16, 4, W))): 1}
COMPILERS = [
    pytest.param("clang++-19", ("-O0", "-g"), id="clang-O0",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
    pytest.param("clang++-19", ("-O2", "-g"), id="clang-O2",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
    pytest.param("g++", ("-O0", "-g"), id="gcc",
                 marks=pytest.mark.skipif(not HAVE_GCC or not HAVE_CLANG, reason="no g++")),
]


def _kinds(p: Profile, name: str) -> dict[tuple[str | None, tuple[tuple[int, int, int, str],
                                                                  ...]], int]:
    out: dict[tuple[str | None, tuple[tuple[int, int, int, str], ...]], int] = {}
    for s in p.types[name].sequences:
        key = (s.entry, tuple((a.role, a.offset, a.size, a.mode) for a in s.accesses))
        out[key] = out.get(key, 0) + s.count
    return out


@pytest.mark.parametrize(("compiler", "flags"), COMPILERS)
def test_base_accesses_count_for_base_and_derived(tmp_path: Path, compiler: str,
                                                  flags: tuple[str, ...]) -> None:
    b = build(tmp_path, ["base_derived.cc"], types=["Base", "Derived", "Tail"], entry=ENTRY,
              compiler=compiler, cxx=True, flags=flags)
    assert b.run() == "2 24 40 24 20\n"
    p = b.trace()
    assert sorted(p.types) == ["Base", "Derived", "Tail"]
    assert [(f.name, f.offset, f.size) for f in p.types["Derived"].fields] == [
        ("Base::a", 0, 8), ("Base::b", 8, 8), ("Base::c", 16, 4), ("d", 24, 8), ("e", 32, 8)]
    assert _kinds(p, "Base") == BASE
    assert _kinds(p, "Derived") == DERIVED
    assert _kinds(p, "Tail") == TAIL
    assert all(t.outside_objects == 0 for t in p.types.values())
    assert p.invocations == 8
