"""`cachefit build` on a C program with two records named `dict` (issue 27, item 4).

tests/trace/programs/twodefs_*: the program's `struct dict` (twodefs_a.h:4, 64 bytes) and
a library's `struct dict` with other members (twodefs_b.h:3, 32 bytes), in two units built
by make. The build traces them as two types, plans each from its own units and profile,
measures each plan (retrace), and the optimized binary has each definition in its own
planned order (its DWARF and the offsets the program prints from both units); the summary
and the report name both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_definitions import record_of
from compiled_helpers import build_env, build_project, makefile

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]
A, B = "dict@twodefs_a.h:4", "dict@twodefs_b.h:3"
ORDER_A = ["type", "used", "rehashidx", "pause", "name"]
ORDER_B = ["size", "privdata", "table", "used"]
FILES = ("twodefs_a.h", "twodefs_b.h", "twodefs_main.c", "twodefs_lib.c")
MAKEFILE = makefile("CC", {"main.o": ["twodefs_main.c", "twodefs_a.h"],
                           "lib.o": ["twodefs_lib.c", "twodefs_b.h"]})


@pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("make") is None,
                    reason="needs clang-19 and make")
def test_build_plans_each_definition(tmp_path: Path) -> None:
    built = build_project(tmp_path, PROGRAMS, FILES, MAKEFILE, types=["dict"],
                          entry=["op_main", "op_lib"], compiler="clang-19")
    out, profile, plan, summary = built.out, built.profile, built.plan, built.summary
    assert sorted(profile.types) == [A, B]
    # where the traced objects start (mod 64): the program's dict on the heap at 32 (3
    # invocations), the library's heap dict at 48 (2) and its global at 0 (1: aligned)
    assert profile.types[A].alignment == {32: 3}
    assert profile.types[B].alignment == {0: 1, 48: 2}
    # A: op_main touches used (8..16) and rehashidx (16..20): one line at 32, no order
    # does better, the declared one is kept. B: op_lib touches size (8..16) and privdata
    # (24..32): at 48 they are 56..64 and 72..80, two lines, at 0 one; (2+2+1)/3 lines.
    # Size and privdata first puts them at 48..64 and at 0..16: one line at both starts
    # (as would swapping size and used; the solver's tie-break takes this one).
    assert plan == {A: {"order": ORDER_A, "expected_size": 64},
                    B: {"order": ORDER_B, "expected_size": 32}}
    assert [(t["name"], t["lines_before"], t["lines_after"], t["size_after_source"])
            for t in summary["types"]] == [(A, 1.0, 1.0, "DWARF"), (B, 5 / 3, 1.0, "DWARF")]
    # the retrace (the plan built and traced): each key checked against its definition's
    # DWARF, one line measured (the new profile starts the objects where the first did)
    retrace = json.loads((out / "steps" / "retrace.json").read_text())["types"]
    assert {k: (v["lines"], v["layout_checked"]) for k, v in retrace.items()} == \
        {A: (1.0, "DWARF"), B: (1.0, "DWARF")}
    assert [t["lines_measured"] for t in summary["types"]] == [1.0, 1.0]
    assert summary["notes"] == []
    assert "compiled as declared" not in (out / "optimize" / "build.log").read_text()
    layouts = {f.name: json.loads(f.read_text())["new_order"]
               for f in (out / "layout").glob("*.json")}
    assert layouts == {"dict_twodefs_a.h_4.json": ORDER_A, "dict_twodefs_b.h_3.json": ORDER_B}
    # the optimized binary: each definition in its own planned order (DWARF), and the
    # offsets both units print (sizeof, then type/table, used/size, rehashidx/used,
    # name/privdata)
    optimized = out / "optimize" / "bin" / "prog"
    for key, order in ((A, ORDER_A), (B, ORDER_B)):
        assert [f.name for f in record_of(str(optimized), key).fields] == order
    assert [f.name for f in record_of(str(out / "profile" / "bin" / "prog"), B).fields] == \
        ["table", "size", "used", "privdata"]
    run = subprocess.run([str(optimized)], capture_output=True, text=True, check=True)
    assert run.stdout == "main 64 0 8 16 24\nlib 32 16 0 24 8\n"
    report = (out / "report" / "report.txt").read_text()
    assert f"type {A}: 64 bytes" in report and f"type {B}: 32 bytes" in report


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="needs clang-19")
def test_report_binary_reads_the_definition(tmp_path: Path) -> None:
    """`cachefit report --type dict@twodefs_b.h:3 --binary prog` lays out the library's
    dict from its own definition in the DWARF (32 bytes), not the program's (64)."""
    for name in FILES:
        shutil.copy(PROGRAMS / name, tmp_path / name)
    env = build_env(tmp_path)
    (tmp_path / "cachefit.toml").write_text(
        '[trace]\ntypes = ["dict"]\nentry = ["op_main", "op_lib"]\n')
    subprocess.run([*CACHEFIT, "cc", "-O0", "-g", "twodefs_main.c", "twodefs_lib.c", "-o",
                    "prog"], cwd=tmp_path, check=True, capture_output=True,
                   env={**env, "CACHEFIT_MODE": "profile", "CACHEFIT_CC": "clang-19"})
    subprocess.run([*CACHEFIT, "trace", "-o", "p.json", "--", "./prog"], cwd=tmp_path,
                   env=env, check=True, capture_output=True)
    proc = subprocess.run([*CACHEFIT, "report", "p.json", "--type", B, "--binary", "prog"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"type {B}: 32 bytes" in proc.stdout
    assert "layout before: compiler: DWARF of prog" in proc.stdout
    assert "lines per invocation          1.67" in proc.stdout


def test_analysis_of_one_definition_scans_its_own_units(tmp_path: Path) -> None:
    """The layout step's analysis of a definition key: the record is the definition at
    that place, and only the units defining it there are scanned. The library's unit pins
    its dict's privdata (a static assertion on its offset): a constraint of the library's
    dict only, not of the program's (which has no privdata)."""
    from cachefit.model.type_names import definition_matches
    from cachefit.reorder.analysis import analyse
    from cachefit.reorder.scan_pool import ScanOptions
    for name in FILES:
        shutil.copy(PROGRAMS / name, tmp_path / name)
    lib = tmp_path / "twodefs_lib.c"
    lib.write_text(lib.read_text() + "\n_Static_assert(offsetof(struct dict, privdata) == 24, "
                   '"privdata");\n')
    units = [(str(tmp_path / s), ["-x", "c"]) for s in ("twodefs_main.c", "twodefs_lib.c")]
    found = {}
    for key in (A, B):
        where = key.split("@", 1)[1]
        a = analyse(key, units, scan_options=ScanOptions(1, False),
                    defined_at=lambda _u, loc, w=where: definition_matches(
                        w, loc.file, loc.line, str(tmp_path)))
        found[key] = ([f.name for f in a.record.fields], Path(a.unit[0]).name,
                      [(c.kind, c.fields) for c in a.constraints], a.warnings)
    assert found == {
        A: (["type", "used", "rehashidx", "pause", "name"], "twodefs_main.c", [], []),
        B: (["table", "size", "used", "privdata"], "twodefs_lib.c", [("pin", ("privdata",))],
            [])}
