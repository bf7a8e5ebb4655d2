"""A traced record inside a traced record: an access counts for both (issue 27, item 4).

tests/trace/programs/nested_member.c: struct outer (tag 0, in 8..24, z 24; 32 bytes)
holds struct inner (x 0, y 8; 16 bytes), both traced; one outer on the heap (a typed
allocation) and one global (from the debug information), the inner inside each
registered by the program (cachefit_object). An access to o->in.x counts for the outer's
role at 8 and the inner's at 0; one to o->z for the outer only; op_in(&o->in) for both.
Before, each access counted for one of the two, whichever the runtime resolved (here the
outer: the inner had no sequence). Exact profiles with clang-19 and gcc.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, compiler_params, seqs

R, W = "r", "w"
COMPILERS = compiler_params("clang-19", "gcc")


@pytest.mark.parametrize("compiler", COMPILERS)
def test_member_accesses_count_for_both(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["nested_member.c"], types=["outer", "inner"], entry=["op", "op_in"],
              compiler=compiler)
    assert b.run() == "32 16\n"
    p = b.trace()
    # op 3 times (heap twice, global once): writes in.x (8), z (24), reads tag (0)
    assert seqs(p, "outer") == {((0, 8, 8, W), (0, 24, 8, W), (0, 0, 4, R)): 3,
                                ((0, 16, 4, W),): 1}        # op_in: in.y
    assert seqs(p, "inner") == {((0, 0, 8, W),): 3, ((0, 8, 4, W),): 1}
    assert p.types["outer"].outside_objects == p.types["inner"].outside_objects == 0
    assert p.invocations == 4
