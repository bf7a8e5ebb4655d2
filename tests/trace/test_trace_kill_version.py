"""The kill version keeps what lookups found across registrations, and nothing more.

The runtime validates what a lookup found (the fast roles, the roles, its caches of
objects) against a version changed only when an object is removed or registered over
another (cf_killseq), and what a lookup did not find (a gap between objects) against the
registry's version, changed by every registration. tests/trace/programs/kill_version.c
touches bytes of an arena before an object is registered there, after, after it is
forgotten, and after an object of another type is registered in its place, all inside one
invocation whose first object stays the fast role. The profile must hold exactly the
sequences below, with clang (inlined checks) and gcc (the out-of-line callbacks), with the
registry's shadow and without it (then the gaps are remembered from lookups).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import kinds
from trace_helpers import build, compiler_params

R, W = "r", "w"
EXPECTED = {
    "obj": {("work", ((0, 0, 4, R), (0, 8, 8, R), (1, 8, 8, R), (0, 16, 1, R), (0, 0, 4, R),
                      (0, 8, 8, R), (0, 0, 4, W)), None): 3},
    "pair": {("work", ((0, 8, 8, R),), None): 3},
}



@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
def test_kill_version_keeps_sequences_exact(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["kill_version.c"], types=["obj", "pair"], entry=["work"],
              compiler=compiler, flags=("-O2", "-g"))
    for shadow in ("1", "0"):  # without the shadow, gaps are known from lookups only
        b.env["CACHEFIT_SHADOW"] = shadow
        prof = b.trace(output=f"prof{shadow}.json")
        assert {t: kinds(prof, t) for t in ("obj", "pair")} == EXPECTED, shadow
        assert prof.invocations == 3
    assert b.run() == "1\n"
