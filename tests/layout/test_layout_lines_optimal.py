"""The dirty search over lines-optimal states (native block search): the marking of the
lines projection's states that lie on a layout of the least lines, and the dirty search
that drops every child outside them, keep the least dirty lines among lines-optimal
layouts (against the plain dirty search and against enumeration), prune, and give way to
the plain dirty search when the marking cannot end."""

from __future__ import annotations

import pytest
from test_layout_block_best_first import _case
from test_layout_block_native import _native, _problem  # noqa: F401  (_native: autouse)

from cachefit.layout import block_native as bn
from cachefit.layout import block_search as bs
from cachefit.layout.block_search import block_search
from cachefit.layout.problem import LayoutProblem

CASES = [(40, 16, 2), (40, 20, 5), (60, 24, 1), (40, 28, 0), (30, 18, 3), (50, 22, 4)]



def _least_lines(problem: LayoutProblem) -> int:
    lines = bs._Search(problem, dirty=False, counter=bs._Counter(10**9, None))
    out, _ = bn.best_first(lines, 10**12, 10**8, None)
    assert out.complete and out.cost is not None
    return out.cost


def _dirty(problem: LayoutProblem, least: int, alive: bn.LinesOptimalStates | None
           ) -> tuple[int | None, int]:
    """The dirty search's optimum (dirty part) and the states it queued."""
    scalar = bs._Search(problem, dirty=True, counter=bs._Counter(10**9, None))
    base = least * scalar.scale
    out, _ = bn.best_first(scalar, base + scalar.scale - 1, 10**8, None,
                           (least, scalar.scale), partial=False, alive=alive)
    assert out.complete
    return (None if out.cost is None else out.cost - base), out.queued


def _mark(problem: LayoutProblem, least: int, budget: int = 10**8
          ) -> tuple[bn.LinesOptimalStates | None, int]:
    scalar = bs._Search(problem, dirty=True, counter=bs._Counter(10**9, None))
    view, ptype = scalar.lines_view()
    out, status, table = bn.lines_optimal_states(view, ptype, least, budget, None)
    return table, status


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_dirty_optimum_over_lines_optimal_states_is_the_plain_one(
        n: int, hot: int, seed: int) -> None:
    problem = _problem(n, hot, seed)
    least = _least_lines(problem)
    table, status = _mark(problem, least)
    assert table is not None, status
    try:
        assert table.live() >= 1
        want, plain_queued = _dirty(problem, least, None)
        got, queued = _dirty(problem, least, table)
    finally:
        table.close()
    assert want is not None and got == want
    assert queued < plain_queued


@pytest.mark.parametrize("seed", range(10))
def test_dirty_optimum_over_lines_optimal_states_is_the_enumerated_one(seed: int) -> None:
    problem, want = _case(seed)
    assert _least_lines(problem) == want[0]
    table, status = _mark(problem, want[0])
    assert table is not None, status
    try:
        got, _ = _dirty(problem, want[0], table)
    finally:
        table.close()
    assert got == want[1]


def test_marking_cut_by_the_budget_gives_no_table() -> None:
    problem = _problem(40, 28, 0)
    table, status = _mark(problem, _least_lines(problem), budget=100)
    assert table is None and status == bn.NODES


@pytest.mark.parametrize("share", [0.0, 0.001, 0.9])
def test_block_search_proves_the_dirty_optimum_whatever_the_marking_gets(
        share: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no budget for the marking, too little, or enough, block_search ends with the
    same proven dirty optimum (the plain dirty search takes over)."""
    problem = _problem(40, 20, 5)
    least = _least_lines(problem)
    want, _ = _dirty(problem, least, None)
    monkeypatch.setattr(bs, "MARK_SHARE", share)
    result = block_search(problem, upper=(least, 10**6), max_nodes=10**7)
    assert result.lines_exact and result.lines_bound == least
    assert result.dirty_exact and result.dirty_bound == want


def test_lines_view_keeps_the_lines_and_merges_only_equal_pieces() -> None:
    problem = _problem(60, 24, 1)
    scalar = bs._Search(problem, dirty=True, counter=bs._Counter(10**9, None))
    view, ptype = scalar.lines_view()
    nl = len(problem.lines_fp)
    assert view.nfp == nl and len(ptype) == len(scalar.types)
    assert sum(view.counts0) == sum(scalar.counts0)
    for t, pt in zip(scalar.types, ptype, strict=True):
        v = view.types[pt]
        assert (v.size, v.align, v.mask) == (t.size, t.align, t.mask & ((1 << nl) - 1))
        assert set(t.units) <= set(v.units)
    assert view.weight == [w // scalar.scale for w in scalar.weight[:nl]]
    assert view.root_bound() == _search_lines_root(problem)


def _search_lines_root(problem: LayoutProblem) -> int:
    """The lines search's own root bound (blocks merged or not, the same bound)."""
    return bs._Search(problem, dirty=False, counter=bs._Counter(1, None)).root_bound()
