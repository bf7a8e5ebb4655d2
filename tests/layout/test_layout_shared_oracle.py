"""One lines oracle for both phases, and nested groups (docs/layout.md, "One oracle for
both phases", "Nested groups").

The native lines search runs over the dirty search's lines oracle
(`block_native.LinesOracle`), and the dirty search goes on with the oracle's memo. Against
the best-first search and enumeration it must find the same least lines, with paths in the
lines search's item types that replay to their cost; the dirty search that goes on with the
memo must find the dirty optimum of a search with an oracle of its own, in fewer nodes; a
plan cut by its budget followed by another plan (other groups, the same memo) must end with
the same optimum. Nested groups (a group bounded by a group of its heaviest half) must keep
every optimum, and a cut search's bound must stay at or below it.
"""

from __future__ import annotations

import pytest
from test_layout_block_best_first import _case
from test_layout_block_native import _problem
from test_layout_threshold_lines import CASES, _best_first_optimum, _replayed

from cachefit.layout import block_native as bn
from cachefit.layout import block_search as bs
from cachefit.layout.problem import LayoutProblem


def _searches(problem: LayoutProblem) -> tuple[bs._Search, bs._Search]:
    return (bs._Search(problem, dirty=False),
            bs._Search(problem, dirty=True))


def _oracle(problem: LayoutProblem) -> tuple[bs._Search, bs._Search, bn.LinesOracle]:
    lines, scalar = _searches(problem)
    oracle = bn.LinesOracle(scalar, lines)
    assert oracle.handle is not None
    return lines, scalar, oracle


def _dirty(scalar: bs._Search, least: int, oracle: bn.LinesOracle | None,
           plan: tuple[int, int] = (1, 6)) -> tuple[int | None, int]:
    """The threshold dirty search's optimum (dirty part; None: nothing below the scale) and
    its nodes, with the shared oracle or one of its own."""
    base = least * scalar.scale
    out, _ = bn.threshold(scalar, base + scalar.scale, 10**8, groups=plan[0],
                          group_size=plan[1], group_cap=10**8, floor=(least, scalar.scale),
                          oracle_cap=10**8, nest=3, oracle=oracle)
    assert out.complete
    return (None if out.cost is None else out.cost - base), out.expanded


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_the_lines_search_over_the_oracle_finds_the_least_lines(n: int, hot: int,
                                                                seed: int) -> None:
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    lines, _scalar, oracle = _oracle(problem)
    try:
        out, status = oracle.lines_search(10**12, 10**8, 1, 6, 3, 10**8)
        assert status == bn.FOUND and out.complete and out.cost == want == out.bound
        assert out.path is not None and _replayed(lines, out.path) == want
        # the memo it keeps: from a limit at the optimum, nothing below it
        at, status = oracle.lines_search(want, 10**8, 1, 8, 3, 10**8)
        assert status == bn.NONE and at.complete and at.cost is None and at.bound >= want
    finally:
        oracle.close()


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_the_dirty_search_goes_on_with_the_memo(n: int, hot: int, seed: int) -> None:
    """The dirty optimum with the oracle the lines search filled is the one with an oracle
    of its own, and the dirty search spends less (its oracle need not prove the least lines
    again)."""
    problem = _problem(n, hot, seed)
    least = _best_first_optimum(problem)
    _lines, scalar, oracle = _oracle(problem)
    try:
        out, _ = oracle.lines_search(10**12, 10**8, 1, 6, 3, 10**8)
        assert out.complete and out.cost == least
        shared, shared_nodes = _dirty(scalar, least, oracle)
    finally:
        oracle.close()
    own, own_nodes = _dirty(_searches(problem)[1], least, None)
    assert shared == own
    assert shared_nodes < own_nodes


@pytest.mark.parametrize(("n", "hot", "seed"), CASES[:4])
def test_a_plan_cut_then_another_keeps_the_optimum(n: int, hot: int, seed: int) -> None:
    """The first plan cut at any budget (its bound at or below the optimum), the second,
    with other groups and the same memo, below the first's layout: the least lines, and
    then the dirty optimum of a search with an oracle of its own."""
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    own, _ = _dirty(_searches(problem)[1], want, None)
    for budget in (1, 30, 1000):
        lines, scalar, oracle = _oracle(problem)
        try:
            first, status = oracle.lines_search(10**12, budget, 1, 6, 3, 10**8)
            assert first.bound <= want
            if first.complete:
                continue
            assert status == bn.NODES
            below = first.cost if first.cost is not None else 10**12
            out, _ = oracle.lines_search(below, 10**8, 1, 8, 3, 10**8)
            assert out.complete
            got = out.cost if out.cost is not None else first.cost
            assert got == want
            if out.path is not None:
                assert _replayed(lines, out.path) == want
            assert _dirty(scalar, want, oracle, (1, 8))[0] == own
        finally:
            oracle.close()


@pytest.mark.parametrize("seed", range(10))
def test_both_phases_over_one_oracle_give_the_enumerated_optimum(seed: int) -> None:
    problem, want = _case(seed)
    lines, scalar = _searches(problem)
    oracle = bn.LinesOracle(scalar, lines)
    if oracle.handle is None:       # a projection it cannot build: block_search goes without
        return
    try:
        out, _ = oracle.lines_search(want[0] + 1, 10**6, 1, 2, 3, 10**6)
        assert out.complete and out.cost == want[0]
        assert out.path is not None and _replayed(lines, out.path) == want[0]
        base = want[0] * scalar.scale
        dirty, _ = bn.threshold(scalar, base + want[1] + 1, 10**6, groups=1,
                                group_size=2, group_cap=10**6, floor=(want[0], scalar.scale),
                                oracle_cap=10**6, nest=3, oracle=oracle)
        assert dirty.complete and dirty.cost == base + want[1]
    finally:
        oracle.close()


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
@pytest.mark.parametrize(("groups", "size"), [(1, 4), (1, 6), (2, 5)])
def test_nested_groups_keep_the_optimum(n: int, hot: int, seed: int, groups: int,
                                        size: int) -> None:
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    lines = _searches(problem)[0]
    out, status = bn.threshold(lines, 10**12, 10**8, groups=groups, group_size=size,
                               nest=3)
    assert status == bn.FOUND and out.cost == want == out.bound
    assert out.path is not None and _replayed(lines, out.path) == want
    bounds = []
    for budget in (10, 1000, 30_000):
        cut, _ = bn.threshold(_searches(problem)[0], 10**12, budget, groups=groups,
                              group_size=size, nest=3)
        assert cut.bound <= want
        bounds.append(cut.bound)
    assert bounds == sorted(bounds)


def test_block_search_proves_the_same_with_and_without_the_shared_oracle(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for n, hot, seed in CASES[:4]:
        problem = _problem(n, hot, seed)
        want = _best_first_optimum(problem)
        results = []
        for shared in (True, False):
            monkeypatch.setattr(bs, "SHARED_ORACLE", shared)
            r = bs.block_search(problem, upper=(want, 10**6), max_nodes=10**7)
            assert r.lines_exact and r.lines_bound == want
            results.append((r.dirty_bound, r.dirty_exact))
        assert results[0] == results[1] and results[0][1]


def test_a_near_lines_proof_goes_on_with_the_dirty_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When the plans end cut with a layout near their bound (NEAR_GAP), the last plan goes
    on with the dirty search's extra budget, granted once: the lines are proven at budgets
    where they are not without it, every bound stays at or below the optimum, and the
    whole search stays within the budget plus one extra."""
    n, hot, seed = CASES[1]
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    gained = 0
    for budget in (3_000, 10_000, 30_000):
        results = []
        for near in (0.0, 1.0):
            monkeypatch.setattr(bs, "NEAR_GAP", near)
            r = bs.block_search(problem, upper=(want + 900, 10**6), max_nodes=budget)
            assert r.lines_bound <= want
            assert r.nodes <= budget * (1 + bs.DIRTY_EXTRA_SHARE) + 2
            results.append(r.lines_exact)
        assert results[0] <= results[1], budget
        gained += results[1] and not results[0]
    assert gained >= 1


def test_the_dirty_extra_is_granted_once() -> None:
    counter = bs._Counter(1000, None)
    assert counter.grant_dirty_extra()
    assert not counter.grant_dirty_extra()
    assert counter.limit == 1000 + int(1000 * bs.DIRTY_EXTRA_SHARE)
