"""The chosen layout does not depend on the machine's load (issue 28).

Every budget of the optimizer is a count (CP-SAT deterministic time, evaluations, nodes), so
the same record and profile give the same order and cost with a CPU hog on the other core,
and even when every clock reading jumps ahead by minutes. Records here are ones whose
budgets end the search (not proven at once): an unaligned one that goes through block
search and a cache-aligned one that goes through the CP-SAT line models.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from layout_synth import large_case, typed
from ortools.sat.python import cp_model

from cachefit.layout import optimize_layout
from cachefit.layout.result import LayoutResult

CASES = [  # (fields, hot, seed, object_align, time_limit)
    pytest.param(60, 24, 3, None, 2.0, id="unaligned-block-search"),
    pytest.param(120, 40, 9, 64, 2.0, id="cache-aligned-line-models"),
]


@contextmanager
def cpu_hog() -> Iterator[None]:
    """A busy Python loop in another process for the duration."""
    proc = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        time.sleep(0.2)
        yield
    finally:
        proc.kill()
        proc.wait()


def _run(fields: int, hot: int, seed: int, object_align: int | None,
         time_limit: float) -> LayoutResult:
    record, entry = large_case(fields, hot, seed)
    return optimize_layout(record, typed(entry), object_align=object_align,
                           time_limit=time_limit)


def _same(a: LayoutResult, b: LayoutResult) -> None:
    assert a.order == b.order
    assert (a.lines_after, a.dirty_after, a.size_after) == \
        (b.lines_after, b.dirty_after, b.size_after)
    assert (a.lines_lower_bound, a.dirty_lower_bound, a.method) == \
        (b.lines_lower_bound, b.dirty_lower_bound, b.method)


@pytest.mark.parametrize(("fields", "hot", "seed", "object_align", "time_limit"), CASES)
def test_same_layout_with_a_cpu_hog(fields: int, hot: int, seed: int,
                                    object_align: int | None, time_limit: float) -> None:
    quiet = _run(fields, hot, seed, object_align, time_limit)
    with cpu_hog():
        loaded = _run(fields, hot, seed, object_align, time_limit)
    _same(quiet, loaded)


@pytest.mark.parametrize(("fields", "hot", "seed", "object_align", "time_limit"), CASES)
def test_same_layout_when_the_clock_races(monkeypatch: pytest.MonkeyPatch, fields: int,
                                          hot: int, seed: int, object_align: int | None,
                                          time_limit: float) -> None:
    """A machine so loaded that every clock reading is minutes after the last: nothing
    the optimizer decides reads the clock, so the layout is the same."""
    quiet = _run(fields, hot, seed, object_align, time_limit)
    now = [time.monotonic()]

    def racing() -> float:
        now[0] += 600.0
        return now[0]

    monkeypatch.setattr(time, "monotonic", racing)
    monkeypatch.setattr(time, "perf_counter", racing)
    monkeypatch.setattr(time, "time", racing)
    _same(quiet, _run(fields, hot, seed, object_align, time_limit))


def test_cp_sat_solves_have_no_wall_clock_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every CP-SAT solve of the optimizer is bounded by deterministic time only, and their
    deterministic time in all stays within a few times the budget `time_limit` grants."""
    from cachefit.layout.optimizer import DET_PER_SECOND

    seen: list[tuple[float, float]] = []
    used: list[float] = []
    solve = cp_model.CpSolver.solve

    def spy(self: cp_model.CpSolver, *args: Any, **kw: Any) -> Any:
        seen.append((self.parameters.max_time_in_seconds,
                     self.parameters.max_deterministic_time))
        status = solve(self, *args, **kw)
        used.append(self.response_proto.deterministic_time)
        return status

    monkeypatch.setattr(cp_model.CpSolver, "solve", spy)
    time_limit = 2.0
    _run(120, 40, 9, 64, time_limit)
    assert seen
    default_wall = cp_model.CpSolver().parameters.max_time_in_seconds
    assert all(wall == default_wall for wall, _ in seen), seen
    assert all(det < 1e6 for _, det in seen), seen
    assert sum(used) <= 3 * DET_PER_SECOND * time_limit + 0.5, used
