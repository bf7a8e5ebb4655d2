"""`static_assert`s on offsets and sizes are order constraints: pins and size bounds.

Source mode (`cachefit reorder`) and the build-time mode (`reorder_unit`) must constrain the
optimizer with them, list them with their locations, and refuse an order that would make an
assert fail, before the compiler does; results are compiled and run with gcc and clang-19.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import C_COMPILERS, build_and_run, snapshot, write

from cachefit.errors import UnsafeTransformation
from cachefit.pipeline.unit_transform import reorder_unit
from cachefit.reorder.analysis import analyse, units_for

CLANG = shutil.which("clang-19")

REC = """\
#include <stddef.h>
struct item {
    char tag;
    long a;
    char b;
    long x;
    int c;
    long e;
    char d;
    long y;
};
#ifndef NO_ASSERTS
_Static_assert(offsetof(struct item, tag) == 0, "tag first");
_Static_assert(sizeof(struct item) == 64, "size");
#endif
"""
MAIN = """\
#include <stdio.h>
#include "rec.h"
int main(void) {
    struct item i = {.tag = 1, .a = 2, .b = 3, .x = 4, .c = 5, .e = 6, .d = 7, .y = 8};
    printf("%d %ld %d %ld %d %ld %d %ld %zu\\n", i.tag, i.a, i.b, i.x, i.c, i.e, i.d, i.y,
           sizeof i);
    return 0;
}
"""
OFFSETS = [("tag", 0, 1), ("a", 8, 8), ("b", 16, 1), ("x", 24, 8), ("c", 32, 4),
           ("e", 40, 8), ("d", 48, 1), ("y", 56, 8)]
# a and e are written together, tag and d read together: with 16-byte lines the optimizer
# wants a, e at offsets 0 and 8 and the record packed to 40 bytes.
PROFILE = {
    "format": "cachefit-profile", "version": 1, "cache_line": 16, "invocations": 130,
    "types": {"item": {
        "size": 64, "fields": [{"name": n, "offset": o, "size": s} for n, o, s in OFFSETS],
        "sequences": [{"count": 100, "accesses": [[0, 8, 8, "w"], [0, 40, 8, "w"]]},
                      {"count": 30, "accesses": [[0, 0, 1, "r"], [0, 48, 1, "r"]]}],
        "dropped": {}}},
}


def _files(tmp_path: Path) -> list[Path]:
    write(tmp_path, {"rec.h": REC, "main.c": MAIN, "p.json": json.dumps(PROFILE)})
    return [tmp_path / "rec.h", tmp_path / "main.c"]


def _kinds(tmp_path: Path, asserts: str) -> list[tuple[str, tuple[str, ...], object, int]]:
    write(tmp_path, {"r.h": "#include <stddef.h>\nstruct s { char t; long a; int b; };\n",
                     "u.c": '#include "r.h"\n' + asserts})
    a = analyse("s", units_for([str(tmp_path / "r.h"), str(tmp_path / "u.c")], None,
                               ["-std=gnu11"]))
    return [(c.kind, c.fields, c.boundary, c.location.line if c.location else 0)
            for c in a.constraints]


def test_assert_forms_become_constraints(tmp_path: Path) -> None:
    got = _kinds(tmp_path,
                 '_Static_assert(offsetof(struct s, t) == 0, "t");\n'
                 '_Static_assert(sizeof(struct s) == 3 * 8, "exact");\n'
                 '_Static_assert(32 >= sizeof(struct s) && offsetof(struct s, b) == 16, "");\n'
                 '_Static_assert(sizeof(struct s) < 40, "strict");\n'
                 '_Static_assert(sizeof(struct s) >= 8, "a lower bound only");\n'
                 '_Static_assert(sizeof(struct s) == 24 || sizeof(long) == 4, "either");\n')
    assert got == [("pin", ("t",), None, 2), ("size", (), 24, 3), ("pin", ("b",), None, 4),
                   ("max_size", (), 32, 4), ("max_size", (), 39, 5)]


def test_pre_c11_array_asserts_pin_offsets(tmp_path: Path) -> None:
    """The pre-C11 static assertion, an array whose size is negative unless the offset has
    its value (libuv's STATIC_ASSERT, a parameter; a typedef; a variable), pins the field
    as `_Static_assert` does; an array whose size only mentions an offset pins nothing."""
    got = _kinds(tmp_path,
                 "#define STATIC_ASSERT(e) void check_(int failed[1 - 2 * !(e)])\n"
                 "STATIC_ASSERT(offsetof(struct s, a) == 8);\n"
                 "typedef char check_b[(offsetof(struct s, b) == 16) ? 1 : -1];\n"
                 "extern char check_t[offsetof(struct s, t) != 0 ? -1 : 1];\n"
                 "char room[offsetof(struct s, b)];\n")
    assert got == [("pin", ("a",), None, 3), ("pin", ("b",), None, 4), ("pin", ("t",), None, 5)]


def test_optimizer_keeps_asserted_offset_and_size(tmp_path: Path, cachefit) -> None:
    paths = _files(tmp_path)
    before = {cc: build_and_run(tmp_path, "main.c", cc, "-std=c11") for cc in C_COMPILERS}
    # Without the asserts the optimizer moves tag and shrinks the record (so they bind).
    code, out, err = cachefit("reorder", "item", *paths, "--profile", tmp_path / "p.json",
                              "--json", "--", "-std=c11", "-DNO_ASSERTS")
    assert code == 0, err
    free = json.loads(out)
    assert free["offsets"]["tag"] != 0 and free["size"]["after"] < 64
    code, out, err = cachefit("reorder", "item", *paths, "--profile", tmp_path / "p.json",
                              "--json", "--in-place", "--", "-std=c11")
    assert code == 0, err
    report = json.loads(out)
    assert report["offsets"]["tag"] == 0 and report["size"] == {"before": 64, "after": 64}
    assert report["new_order"] != report["old_order"]
    assert report["lines"]["after"] < report["lines"]["before"]
    assert report["lines"]["after"] > free["lines"]["after"]     # the constraints cost
    assert report["constraints"] == [
        {"kind": "pin", "fields": ["tag"], "reason": "a static_assert checks its offset (0)",
         "location": f"{tmp_path / 'rec.h'}:13:1"},
        {"kind": "size", "fields": [], "reason": "a static_assert checks it (== 64)",
         "location": f"{tmp_path / 'rec.h'}:14:1", "boundary": 64}]
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before[cc]


def test_terminal_lists_assert_constraints(tmp_path: Path, cachefit) -> None:
    paths = _files(tmp_path)
    code, out, err = cachefit("reorder", "item", *paths, "--order", "tag,a,e,b,x,c,y,d",
                              "-o", tmp_path / "out.h", "--", "-std=c11")
    assert code == 0, err
    assert "constraints (2):" in out
    assert f"{tmp_path / 'rec.h'}:13:1: tag keeps its offset" in out
    assert f"{tmp_path / 'rec.h'}:14:1: sizeof stays 64 bytes" in out


@pytest.mark.parametrize(("order", "message", "line"), [
    ("a,tag,b,x,c,e,d,y", "tag would move from offset 0 to 8", 13),
    ("tag,b,d,c,a,x,e,y", "sizeof would become 40 bytes", 14),
])
def test_order_breaking_an_assert_is_refused(tmp_path: Path, cachefit, order: str,
                                             message: str, line: int) -> None:
    paths = _files(tmp_path)
    before = snapshot(paths)
    code, out, err = cachefit("reorder", "item", *paths, "--order", order, "--in-place",
                              "--", "-std=c11")
    assert code == 2 and not out
    assert err.startswith(f"cachefit: error: {tmp_path / 'rec.h'}:{line}:1: {message}")
    assert "does not compile" not in err
    assert snapshot(paths) == before


def test_assert_in_another_unit_constrains_too(tmp_path: Path, cachefit) -> None:
    """The assert is only in main.c; the record's own file knows nothing of it."""
    write(tmp_path, {"rec.h": REC.split("#ifndef")[0],
                     "main.c": MAIN + "_Static_assert(sizeof(struct item) <= 64, \"fits\");\n",
                     "p.json": json.dumps(PROFILE)})
    code, out, err = cachefit("reorder", "item", tmp_path / "rec.h", tmp_path / "main.c",
                              "--profile", tmp_path / "p.json", "--allow-growth", "--json",
                              "--", "-std=c11")
    assert code == 0, err
    report = json.loads(out)
    assert report["constraints"][0]["kind"] == "max_size"
    assert report["size"]["after"] <= 64


@pytest.mark.skipif(CLANG is None, reason="clang-19 not installed")
def test_build_time_unit_refuses_and_keeps(tmp_path: Path) -> None:
    _files(tmp_path)
    unit = tmp_path / "main.i"
    subprocess.run([str(CLANG), "-E", "-std=c11", str(tmp_path / "main.c"), "-o", str(unit)],
                   check=True)
    lines = unit.read_text().splitlines()
    for order, message, assert_text in (
            (["a", "tag", "b", "x", "c", "e", "d", "y"], "tag would move", "__builtin_offsetof"),
            (["tag", "b", "d", "c", "a", "x", "e", "y"], "sizeof would become", "sizeof")):
        with pytest.raises(UnsafeTransformation) as info:
            reorder_unit(str(unit), ["-std=c11"], "item", order)
        assert message in str(info.value) and "does not compile" not in str(info.value)
        where = info.value.location    # the assert's line in the preprocessed unit
        assert where is not None and where.file == str(unit)
        assert lines[where.line - 1].startswith(f"_Static_assert({assert_text}(struct item")
    # An order that keeps tag at 0 and the size at 64 is applied and runs the same; each
    # compiler builds the unit it preprocessed itself (their system headers differ).
    order = ["tag", "a", "e", "b", "x", "c", "y", "d"]
    for cc in C_COMPILERS:
        pre = tmp_path / f"{cc}.i"
        subprocess.run([cc, "-E", "-std=c11", str(tmp_path / "main.c"), "-o", str(pre)],
                       check=True)
        new = tmp_path / f"{cc}-new.i"
        text = reorder_unit(str(pre), ["-std=c11"], "item", order)[str(pre)]
        assert text.index("long e;") < text.index("char b;") < text.index("char d;")
        new.write_text(text)
        results = []
        for src in (pre, new):
            exe = tmp_path / f"{src.stem}.exe"
            subprocess.run([cc, "-std=c11", "-Wall", "-Werror", str(src), "-o", str(exe)],
                           check=True)
            results.append(subprocess.run([str(exe)], check=True, capture_output=True,
                                          text=True).stdout)
        assert results[0] == results[1] and results[0].endswith(" 64\n"), cc


def test_cxx_static_asserts(tmp_path: Path) -> None:
    """C++17 static_assert without a message, in a namespace; a dependent one is ignored."""
    write(tmp_path, {"r.hpp": "#include <cstddef>\nnamespace ns {\n"
                              "struct T { char t; long a; int b; };\n"
                              "static_assert(offsetof(T, t) == 0);\n"
                              "static_assert(sizeof(T) == 24, \"abi\");\n"
                              "template <class X> struct C { static_assert(sizeof(X) <= 8); };\n"
                              "}\n",
                     "m.cpp": '#include "r.hpp"\nint main() { ns::T x{}; return x.t; }\n'})
    a = analyse("ns::T", units_for([str(tmp_path / "m.cpp")], None, ["-std=c++17"]))
    assert [(c.kind, c.fields, c.boundary, c.location.line if c.location else 0)
            for c in a.constraints] == [("pin", ("t",), None, 4), ("size", (), 24, 5)]
