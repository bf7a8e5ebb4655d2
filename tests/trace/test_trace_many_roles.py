"""Many objects in one invocation (issue 26): roles are numbered by first touch and found
again among many others (the runtime's role table, beyond the first few roles it scans),
objects beyond max_objects stay out on every access, and a nested entry still gets its own
role for one of them.  tests/trace/programs/many_roles.c at -O0, default limits
(max_objects = 64)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import entry_counts, kinds
from trace_helpers import build, needs_clang, needs_gcc

R, W = "r", "w"
N, MAX_OBJECTS = 70, 64


def _walk() -> tuple[tuple[int, int, int, str], ...]:
    """walk()'s sequence: role k is the object touched k-th (k * 17 mod N), k < 64."""
    first = tuple(q for k in range(MAX_OBJECTS) for q in ((k, 0, 4, W), (k, 8, 8, R)))
    back: list[tuple[int, int, int, str]] = []
    for k in range(N - 1, -1, -1):
        if k < MAX_OBJECTS:
            back.append((k, 16, 1, W))
            if k % 10 == 5:
                back.append((k, 8, 8, W))        # touch()'s write counts for walk() too
    again = tuple((k, 0, 4, R) for k in range(MAX_OBJECTS))
    return first + tuple(back) + again


@pytest.mark.parametrize("compiler", [
    pytest.param("clang-19", marks=needs_clang),
    pytest.param("gcc", marks=needs_gcc),
])
def test_many_roles_in_one_invocation(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["many_roles.c"], types=["obj"], entry=["walk", "touch"],
              compiler=compiler)
    assert b.run() == "4879\n"   # 2 * sum(range(N)) + touch()'s 7 writes of 7
    prof = b.trace()
    assert kinds(prof, "obj") == {
        ("walk", _walk(), None): 2,
        ("touch", ((0, 8, 8, W),), None): 14,
    }
    assert entry_counts(prof) == {"walk": 2, "touch": 14}
    t = prof.types["obj"]
    assert (t.runaway, t.outside_objects, t.table_full) == (0, 0, 0)
    # each walk() left objects out (counted once per invocation)
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 2, "distinct": 0}}}
