"""The other type's role keeps the sequences exact.

An invocation that touches objects of two types in turn keeps the object it touched last
of the type that is not the fast role's as "the other type's role" (runtime/src/
cf_internal.h, fbase3..fend3): the inlined checks and the out-of-line callbacks append its
quads through its own position in its type's sequence, detached with the fast role
whenever the runtime reads the sequences. tests/trace/programs/other_type.c moves that
role between the types and between two objects of one type, calls a nested entry, sees
the registry change, makes a run of coalesced accesses through it, and fills its type's
buffer through it. The profile must hold exactly the sequences below, with clang (inlined
checks, coalesced runs) and gcc (the out-of-line callbacks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import kinds
from trace_helpers import build, compiler_params

R, W = "r", "w"
STATE_STEP = ((0, 0, 8, R), (0, 8, 8, W)) + ((0, 16, 4, R),) * 3 + (
    (1, 0, 8, R), (0, 8, 8, R), (1, 8, 8, R), (0, 0, 8, R)) + (
    (1, 16, 4, W), (0, 16, 4, W)) * 2 + (
    (0, 20, 4, R), (0, 20, 4, R), (0, 8, 8, R),
    (0, 0, 8, R), (0, 0, 8, W), (0, 16, 4, R), (0, 16, 4, W))
OBJ_STEP = ((0, 0, 4, R),) + ((0, 8, 8, R),) * 3 + (
    (0, 0, 4, R), (1, 0, 4, R), (1, 8, 8, R), (1, 8, 8, R), (0, 8, 8, W), (1, 16, 1, R))
EXPECTED = {
    "state": {("step", STATE_STEP, None): 2,
              ("longstep", ((0, 0, 8, W), (0, 16, 4, R)), (100, 100)): 1},
    "obj": {("step", OBJ_STEP, None): 2,
            ("inner", ((0, 8, 8, W),), None): 2,
            ("longstep", ((0, 0, 4, R),), (100,)): 1},
}



@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
def test_other_type_role_keeps_sequences_exact(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["other_type.c"], types=["state", "obj"],
              entry=["step", "inner", "longstep"], compiler=compiler,
              config_extra="max_accesses = 64\n", flags=("-O2", "-g"))
    prof = b.trace()
    assert {t: kinds(prof, t) for t in ("state", "obj")} == EXPECTED
    assert prof.invocations == 5
    assert b.run() == "99 1 2 7\n"
