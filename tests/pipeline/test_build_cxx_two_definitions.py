"""`cachefit build` on a C++ program with two classes named `Node` (issue 27, item 4, C++).

tests/trace/programs/cxx_twodefs_*.cc: each unit defines its own `Node` in an anonymous
namespace (the program's at cxx_twodefs_a.cc:8, 64 bytes; the library's at
cxx_twodefs_b.cc:8, 32 bytes, other members), built by make with clang++-19. The build
traces them as two types, plans each from its own units and profile, measures each plan
(retrace), and the optimized binary has each definition in its own planned order (its
DWARF and the offsets the program prints from both units).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_definitions import record_of
from compiled_helpers import build_project, makefile

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
A, B = "Node@cxx_twodefs_a.cc:8", "Node@cxx_twodefs_b.cc:8"
FILES = ("cxx_twodefs_a.cc", "cxx_twodefs_b.cc")
MAKEFILE = makefile("CXX", {"a.o": ["cxx_twodefs_a.cc"], "b.o": ["cxx_twodefs_b.cc"]})
# A: op_a touches used (8..16) and rehashidx (16..20) of an object at 48 mod 64: 56..64
# and 64..68, two lines. The optimizer's order puts rehashidx at 52 and used at 56
# (100..112 at 48): one line. B: op_b touches size (8..16) and privdata (24..32) of objects
# at 0 mod 64 (the global aligned): one line each in the declared order, which is kept.
ORDER_A = ["type", "pause", "name", "rehashidx", "used"]
ORDER_B = ["table", "size", "used", "privdata"]


@pytest.mark.skipif(shutil.which("clang++-19") is None or shutil.which("make") is None,
                    reason="needs clang++-19 and make")
def test_build_plans_each_cxx_definition(tmp_path: Path) -> None:
    built = build_project(tmp_path, PROGRAMS, FILES, MAKEFILE, types=["Node"],
                          entry=["op_a", "op_b"], compiler_key="cxx", compiler="clang++-19")
    out, profile, plan, summary = built.out, built.profile, built.plan, built.summary
    assert sorted(profile.types) == [A, B]
    assert profile.types[A].alignment == {48: 3}
    assert profile.types[B].alignment == {0: 3}
    assert plan == {A: {"order": ORDER_A, "expected_size": 64},
                    B: {"order": ORDER_B, "expected_size": 32}}
    assert [(t["name"], t["lines_before"], t["lines_after"], t["size_after_source"],
             t["lines_measured"]) for t in summary["types"]] == \
        [(A, 2.0, 1.0, "DWARF", 1.0), (B, 1.0, 1.0, "DWARF", 1.0)]
    assert summary["notes"] == []
    optimized = out / "optimize" / "bin" / "prog"
    for key, order in ((A, ORDER_A), (B, ORDER_B)):
        assert [f.name for f in record_of(str(optimized), key).fields] == order
    # sizeof, then type/table, used/size, rehashidx/used, name/privdata, from each unit
    run = subprocess.run([str(optimized)], capture_output=True, text=True, check=True)
    assert run.stdout == "a 64 0 56 52 12\nb 32 0 8 16 24\n"
