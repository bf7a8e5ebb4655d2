"""Counting mode gives the summaries of long invocations exactly, quad for quad.

Once the outermost invocation is a summary and runs alone, the runtime counts the
accesses to its fast role in place (one counter per offset, size and mode) instead of
storing a quad for each, files a quad in the summary at its first count and adds the
counters to the hits when the invocation ends. tests/trace/programs/counting.c makes a
long invocation that, after counting began, gets a field first touched by a nested entry,
hands the fast role to another object and back, sees the registry change and makes a run
of coalesced accesses with a member new to the summary; it runs twice. The profile must
hold exactly the expected summary (order of first occurrence, hits) with counting mode
and without it (CACHEFIT_COUNT=0), also when max_distinct leaves a quad out, with clang
(inlined checks, coalesced runs) and gcc (the out-of-line callbacks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import kinds
from trace_helpers import HAVE_CLANG, HAVE_GCC, build

R, W = "r", "w"
LIMITS = "max_accesses = 20\n"
# outer(&a, &b, 45) twice: one summary counted twice, hits summed.
OUTER = ((0, 0, 4, R), (0, 8, 8, W), (0, 16, 1, W), (1, 0, 4, R), (0, 4, 4, W),
         (0, 0, 4, W), (0, 8, 8, R))
HITS = (2 * (45 + 1 + 1 + 1), 2 * 2, 2 * 6, 2, 2, 2, 2)
EXPECTED = {
    ("outer", OUTER, HITS): 2,
    ("inner", ((0, 8, 8, W),), None): 2,
}
# max_distinct = 4: (0, 4, 4, w) and what comes after it are left out of the summary.
EXPECTED_CUT = {
    ("outer", OUTER[:4], HITS[:4]): 2,
    ("inner", ((0, 8, 8, W),), None): 2,
}

VARIANTS = [
    pytest.param("clang-19", ("-O2", "-g"), id="clang-O2",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")),
    pytest.param("gcc", ("-O2", "-g"), id="gcc-O2",
                 marks=pytest.mark.skipif(not HAVE_GCC or not HAVE_CLANG,
                                          reason="gcc or clang-19 is not installed")),
]


@pytest.mark.parametrize(("compiler", "flags"), VARIANTS)
def test_counting_mode_keeps_summaries_exact(tmp_path: Path, compiler: str,
                                             flags: tuple[str, ...]) -> None:
    b = build(tmp_path, ["counting.c"], types=["obj"], entry=["outer", "inner"],
              compiler=compiler, config_extra=LIMITS, flags=flags)
    for count in ("1", "0"):
        b.env["CACHEFIT_COUNT"] = count
        b.env.pop("CACHEFIT_MAX_DISTINCT", None)
        prof = b.trace(output=f"prof{count}.json")
        assert kinds(prof, "obj") == EXPECTED, count
        assert prof.invocations == 4
        b.env["CACHEFIT_MAX_DISTINCT"] = "4"
        prof = b.trace(output=f"cut{count}.json")
        assert kinds(prof, "obj") == EXPECTED_CUT, count
        assert prof.metadata["guards"]["types"]["obj"]["distinct"] == 2
    assert b.run() == "2 8 2\n"
