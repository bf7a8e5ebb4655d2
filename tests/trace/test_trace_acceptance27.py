"""Issue 27's acceptance program: every shape at once, with only `types` and `entry`.

tests/trace/programs/accept27_*: three C units. The program's `struct rec` (accept27_a.h,
80 bytes) is allocated once through a function pointer stored in a struct (zlib's
`strm->zalloc` behind ZALLOC) and once through the `xmalloc(sizeof *r)` wrapper, which
puts a header in front of the block (accept27_mem.c); the library's `struct rec`
(accept27_b.h, 96 bytes, other members) is carved three times by `pool_get(&pool, sizeof
*c[i])` out of one malloc'd block. Traced as `types = ["rec"]` with no `allocators`, the
profile is exact per definition and equals the one with the allocators named by hand;
`cachefit build` plans each definition, and the optimized program (which prints sizeof and
offsetof from each unit) has each plan applied to its own definition only, with the same
results as the plain build.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import PROGRAMS, assert_definitions, build, compiler_params, seqs

from cachefit.frontend.dwarf_definitions import record_of
from cachefit.report.layout_figures import measure_record
from cachefit.report.record_lookup import record_from_profile
from compiled_helpers import build_project, makefile

R, W = "r", "w"
A, B = "rec@accept27_a.h:5", "rec@accept27_b.h:5"
SOURCES = ["accept27_main.c", "accept27_lib.c", "accept27_mem.c"]
HEADERS = ["accept27_a.h", "accept27_b.h", "accept27_mem.h"]
ENTRY = ["op_main", "op_lib"]
HAND_NAMED = 'allocators = ["zalloc", "xmalloc", "pool_get"]\ndeallocators = ["xfree"]\n'
# op_main reads last (64, 8) and writes hits (0, 8): once on the ZALLOC'd rec, twice on
# the xmalloc'd one
SEQ_A = {((0, 64, 8, R), (0, 0, 8, W)): 3}
# op_lib reads len (0, 8) and writes cap (88, 8): once on each of the three carved recs,
# and once more on the first
SEQ_B = {((0, 0, 8, R), (0, 88, 8, W)): 4}
FIELDS_A = [("hits", 0, 8), ("name", 8, 56), ("last", 64, 8), ("next", 72, 8)]
FIELDS_B = [("len", 0, 8), ("tag", 8, 72), ("buf", 80, 8), ("cap", 88, 8)]
# main: 10 + 1; 20 + 1, then 21 + 1; lib: caps 2 * (2, 2, 3) after c[0]'s len became 2,
# plus 3 * 96 bytes taken from the pool: 4 + 4 + 6 + 288
RESULTS = "results 11 22 302\n"
DECLARED = RESULTS + "main 80 0 8 64 72\nlib 96 0 8 80 88\n"
COMPILERS = compiler_params("clang-19", "gcc")


def _copy(directory: Path, names: list[str]) -> None:
    for name in names:
        shutil.copy(PROGRAMS / name, directory / name)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_profile_without_allocators_is_exact(tmp_path: Path, compiler: str) -> None:
    """No `allocators`: the function-pointer allocator, the `sizeof *p` wrapper and the
    pool are found, each `rec` is a type of its own keyed by its definition, with exactly
    its own accesses (2 + 3 objects registered, none touched outside them), and the
    profile is the one with `zalloc`, `xmalloc`, `pool_get` and `xfree` named by hand."""
    profiles = {}
    for variant, extra in (("auto", ""), ("named", HAND_NAMED)):
        directory = tmp_path / variant
        directory.mkdir()
        _copy(directory, HEADERS)
        b = build(directory, SOURCES, types=["rec"], entry=ENTRY, compiler=compiler,
                  config_extra=extra)
        assert (f"type rec: 2 different definitions of rec, traced as 2 types: {A}, {B} "
                "(name one in [trace] types to trace only it)") in b.compile_stderr
        assert b.run() == DECLARED
        p = profiles[variant] = b.trace()
        assert_definitions(p, {A: (80, FIELDS_A, SEQ_A), B: (96, FIELDS_B, SEQ_B)})
        assert p.invocations == 7
        assert p.metadata["registered"] == {A: 2, B: 3}
    # The same sequences, and the same lines and dirty lines per invocation of the
    # declared layouts (two lines, one written, for both records at any start: where the
    # objects start differs, since the runtime's own allocations move the heap).
    auto, named = profiles["auto"], profiles["named"]
    for key in (A, B):
        assert seqs(auto, key) == seqs(named, key)
        for p in (auto, named):
            m = measure_record(record_from_profile(p.types[key]), p.types[key],
                               cache_line=64, object_align=None)
            assert (m.lines, m.dirty) == (2.0, 1.0)


MAKEFILE = makefile("CC", {"main.o": ["accept27_main.c", "accept27_a.h", "accept27_mem.h"],
                           "lib.o": ["accept27_lib.c", "accept27_b.h", "accept27_mem.h"],
                           "mem.o": ["accept27_mem.c", "accept27_mem.h"]})
# The touched pair first, in declared order, then the others in declared order.
ORDER_A = ["hits", "last", "name", "next"]
ORDER_B = ["len", "cap", "tag", "buf"]
# main: hits 0, name 16, last 8, next 72; lib: len 0, tag 16, buf 88, cap 8
OPTIMIZED = RESULTS + "main 80 0 16 8 72\nlib 96 0 16 88 8\n"


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_build_applies_each_plan_to_its_own_definition(tmp_path: Path, compiler: str) -> None:
    """`cachefit build` with only `types` and `entry`: one plan per definition, each
    built into its own definition only (the binary's DWARF, and the offsets each unit
    prints), measured by the retrace, and the program's results unchanged.

    By hand: A's op_main touches hits (0..8) and last (64..72), 64 bytes apart: two lines
    wherever the object starts; B's op_lib touches len (0..8) and cap (88..96): two lines
    too. With the pair side by side (16 bytes at offset 0, objects starting at multiples
    of 16) each is one line; the one written field is one dirty line before and after."""
    built = build_project(tmp_path, PROGRAMS, SOURCES + HEADERS, MAKEFILE, types=["rec"],
                          entry=ENTRY, compiler=compiler)
    project, out, profile = built.project, built.out, built.profile
    plan, summary = built.plan, built.summary
    assert sorted(profile.types) == [A, B]
    assert (seqs(profile, A), seqs(profile, B)) == (SEQ_A, SEQ_B)
    assert plan == {A: {"order": ORDER_A, "expected_size": 80},
                    B: {"order": ORDER_B, "expected_size": 96}}
    assert [(t["name"], t["lines_before"], t["lines_after"], t["dirty_before"],
             t["dirty_after"], t["size_after"], t["size_after_source"], t["lines_measured"])
            for t in summary["types"]] == [(A, 2.0, 1.0, 1.0, 1.0, 80, "DWARF", 1.0),
                                           (B, 2.0, 1.0, 1.0, 1.0, 96, "DWARF", 1.0)]
    assert summary["notes"] == []
    assert "compiled as declared" not in (out / "optimize" / "build.log").read_text()
    optimized = out / "optimize" / "bin" / "prog"
    for key, order in ((A, ORDER_A), (B, ORDER_B)):
        assert [f.name for f in record_of(str(optimized), key).fields] == order
    assert subprocess.run([str(optimized)], capture_output=True, text=True,
                          check=True).stdout == OPTIMIZED
    # the behaviour of the program as its own build makes it, without cachefit
    plain = project / "plain"
    subprocess.run([compiler, "-O0", "-g", *SOURCES, "-o", str(plain)], cwd=project,
                   check=True, capture_output=True)
    assert subprocess.run([str(plain)], capture_output=True, text=True,
                          check=True).stdout == DECLARED
