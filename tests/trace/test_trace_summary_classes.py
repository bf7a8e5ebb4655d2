"""Summaries of long invocations counted by field footprint (issue 26).

The layout stage reduces a sequence to, per role, the fields it touches and the fields it
writes. The runtime therefore counts the summaries of one kind of operation with equal
footprints as one (their accesses' union in order of first occurrence, hits summed), and
compares bytes in no field (padding) exactly. tests/trace/programs/summary_classes.c makes
seven long invocations (max_accesses 4): two with the same fields and other elements of an
array, one that also writes a field, two that touch different padding bytes, and two with
two objects. The profile must hold exactly the summaries below with clang and gcc; with
CACHEFIT_EXACT_SUMMARIES=1 every invocation keeps its own; and `cachefit reorder` chooses
the same layout with the same figures from both profiles.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_trace_nested import kinds
from trace_helpers import CACHEFIT, build, compiler_params

INCLUDE = Path(__file__).resolve().parents[2] / "runtime" / "include"
R, W = "r", "w"
ARR = {i: (0, 4 + 4 * i, 4, R) for i in range(16)}
A = (0, 0, 4, R)
PAD4, PAD2 = (0, 68, 4, R), (0, 68, 2, R)
OP2_A, OP2_B = (A, (1, 0, 4, R), ARR[0], ARR[1], ARR[2]), (A, (1, 0, 4, R), ARR[5], ARR[6],
                                                          ARR[7])
CLASSES = {
    ("op", (ARR[1], A, ARR[2], ARR[3], ARR[4], ARR[9], ARR[10], ARR[11], ARR[12]),
     (1, 2, 1, 1, 1, 1, 1, 1, 1)): 2,
    ("op", (ARR[1], A, ARR[2], ARR[3], ARR[4], (0, 72, 4, W)), (1, 1, 1, 1, 1, 1)): 1,
    ("op", (PAD4, A), (2, 3)): 1,
    ("op", (PAD2, A), (2, 3)): 1,
    ("op2", OP2_A + OP2_B[2:], (2, 2, 1, 1, 1, 1, 1, 1)): 2,
}
EXACT = {
    ("op", (ARR[1], A, ARR[2], ARR[3], ARR[4]), (1, 1, 1, 1, 1)): 1,
    ("op", (A, ARR[9], ARR[10], ARR[11], ARR[12]), (1, 1, 1, 1, 1)): 1,
    ("op", (ARR[1], A, ARR[2], ARR[3], ARR[4], (0, 72, 4, W)), (1, 1, 1, 1, 1, 1)): 1,
    ("op", (PAD4, A), (2, 3)): 1,
    ("op", (PAD2, A), (2, 3)): 1,
    ("op2", OP2_A, (1, 1, 1, 1, 1)): 1,
    ("op2", OP2_B, (1, 1, 1, 1, 1)): 1,
}


@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
def test_summaries_by_field_footprint(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["summary_classes.c"], types=["rec"], entry=["op", "op2"],
              compiler=compiler, flags=("-O2", "-g"))
    b.env["CACHEFIT_MAX_ACCESSES"] = "4"
    prof = b.trace(output="classes.json")
    assert kinds(prof, "rec") == CLASSES
    assert prof.invocations == 7
    b.env["CACHEFIT_EXACT_SUMMARIES"] = "1"
    exact = b.trace(output="exact.json")
    assert kinds(exact, "rec") == EXACT
    assert b.run() == "1\n"
    if compiler != "clang-19":
        return
    # The layout stage sees the same footprints in both: same order, same figures.
    plans = []
    for name in ("classes.json", "exact.json"):
        proc = subprocess.run([*CACHEFIT, "reorder", "rec", "summary_classes.c", "--profile",
                               name, "--json", "-o", f"out-{name}.c", "--", f"-I{INCLUDE}"],
                              cwd=tmp_path,
                              env=b.env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        plan = json.loads(proc.stdout)
        plan.pop("solver_seconds", None)
        plans.append(plan)
    assert plans[0] == plans[1]
    assert plans[0]["lines"]["before"] > 0
