"""Nested invocations counted for the outermost summary without folding their quads.

When the outermost invocation is already a summary and a nested invocation's literal
sequence (in the outermost's own role numbers) already occurred in it, the runtime counts
the sequence for the outermost summary instead of folding its quads one by one
(cf_defer_nested). tests/trace/programs/nested_defer.c: outer() reads d, calls inner() ten
times on its object with two sequences, twice on a second object (another role,
renumbered for inner, never deferred), and reads d again; twice. The summary of outer
must be exactly the one of folding every quad: each access once in the order of first
occurrence, hits summed; the sequences of inner counted as always.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import kinds
from trace_helpers import build, compiler_params

R, W = "r", "w"
A0, B0, C0, D0 = (0, 0, 4, R), (0, 4, 4, R), (0, 8, 4, W), (0, 12, 4, R)
A1, B1 = (1, 0, 4, R), (1, 4, 4, R)
EXPECTED = {
    # per outer(): d twice, a and b in ten calls on r, c in seven, a and b twice on o
    ("outer", (D0, A0, B0, C0, A1, B1), (4, 20, 20, 14, 4, 4)): 2,
    ("inner", (A0, B0), None): 10,          # three calls on r and two on o, per outer()
    ("inner", (A0, B0, C0), None): 14,      # three and four on r
}


@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
def test_nested_sequences_counted_for_the_summary(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["nested_defer.c"], types=["rec"], entry=["outer", "inner"],
              compiler=compiler, flags=("-O2", "-g"))
    b.env["CACHEFIT_MAX_ACCESSES"] = "4"
    prof = b.trace(output="defer.json")
    assert kinds(prof, "rec") == EXPECTED
    assert prof.invocations == 2 + 2 * 12
    assert b.run() == "1\n"
