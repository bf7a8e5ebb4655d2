"""The lines oracle of the native dirty search (docs/layout.md, "The lines oracle").

The dirty search drops every child that the oracle proves unable to reach the least
lines. So, against the plain dirty search and against enumeration, it must keep the least
dirty lines among lines-optimal layouts, on records whose lines classes are split by the
dirty footprints (the oracle merges the pieces of such a class that are left); it must
queue fewer states; and an oracle cut by its cap must let the search finish with the
same optimum.
"""

from __future__ import annotations

import pytest
from test_layout_block_best_first import _case
from test_layout_block_native import _problem

from cachefit.layout import block_native as bn
from cachefit.layout import block_search as bs
from cachefit.layout.block_search import block_search
from cachefit.layout.problem import LayoutProblem

CASES = [(40, 16, 2), (40, 20, 5), (60, 24, 1), (40, 28, 0), (30, 18, 3), (50, 22, 4)]


def _least_lines(problem: LayoutProblem) -> int:
    lines = bs._Search(problem, dirty=False)
    out, _ = bn.best_first(lines, 10**12, 10**8)
    assert out.complete and out.cost is not None
    return out.cost


def _dirty(problem: LayoutProblem, least: int, oracle_cap: int, groups: int = 0,
           group_cap: int = 200_000) -> tuple[int | None, int, int]:
    """The dirty search's optimum (dirty part), the states it queued and its nodes."""
    scalar = bs._Search(problem, dirty=True)
    base = least * scalar.scale
    out, _ = bn.best_first(scalar, base + scalar.scale - 1, 10**8,
                           (least, scalar.scale), partial=False, groups=groups,
                           group_size=3, group_cap=group_cap, oracle_cap=oracle_cap)
    assert out.complete
    return (None if out.cost is None else out.cost - base), out.queued, out.expanded


def _split_classes(problem: LayoutProblem) -> int:
    """Lines classes (whole-granule pieces with the same lines footprints) whose pieces
    have different dirty footprints: the oracle merges what is left of them."""
    scalar = bs._Search(problem, dirty=True)
    low = (1 << len(problem.lines_fp)) - 1
    classes: dict[int, set[int]] = {}
    for t in scalar.types:
        if t.align == scalar.g and t.size % scalar.g == 0:
            classes.setdefault(t.mask & low, set()).add(t.mask)
    return sum(1 for masks in classes.values() if len(masks) > 1)


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_dirty_optimum_with_the_oracle_is_the_plain_one(n: int, hot: int, seed: int) -> None:
    problem = _problem(n, hot, seed)
    assert _split_classes(problem) >= 1
    least = _least_lines(problem)
    want, plain_queued, _ = _dirty(problem, least, 0)
    assert want is not None
    for groups in (0, 2):
        got, queued, _ = _dirty(problem, least, 10**8, groups)
        assert got == want
        assert queued < plain_queued


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_threshold_groups_keep_the_optimum_at_any_cap(n: int, hot: int, seed: int) -> None:
    """The oracle asks its groups by threshold (each one whether it can pay at most what
    the budget leaves when the others pay their floors); a group cut by its cap dies and
    its footprints go back to their plain terms. At every cap the optimum stays the plain
    search's."""
    problem = _problem(n, hot, seed)
    least = _least_lines(problem)
    want, _, _ = _dirty(problem, least, 0)
    for groups in (1, 2, 3):
        for cap in (1, 40, 10**8):
            got, _, _ = _dirty(problem, least, 10**8, groups, cap)
            assert got == want, (groups, cap)


@pytest.mark.parametrize("seed", range(10))
def test_dirty_optimum_with_the_oracle_is_the_enumerated_one(seed: int) -> None:
    problem, want = _case(seed)
    assert _least_lines(problem) == want[0]
    for groups in (0, 1, 2):
        got, _, _ = _dirty(problem, want[0], 10**8, groups, 10**8)
        assert got == want[1], groups


@pytest.mark.parametrize("cap", [1, 30, 300])
def test_an_oracle_cut_by_its_cap_keeps_the_optimum(cap: int) -> None:
    """Once its cap is reached the oracle lets every child through: the search ends with
    the plain search's optimum, and the oracle's nodes are counted."""
    problem = _problem(40, 20, 5)
    least = _least_lines(problem)
    want, _, plain_nodes = _dirty(problem, least, 0)
    got, _, nodes = _dirty(problem, least, cap)
    assert got == want
    assert nodes >= plain_nodes // 2


def test_block_search_proves_the_dirty_optimum_with_the_oracle() -> None:
    problem = _problem(40, 20, 5)
    least = _least_lines(problem)
    want, _, _ = _dirty(problem, least, 0)
    result = block_search(problem, upper=(least, 10**6), max_nodes=10**7)
    assert result.lines_exact and result.lines_bound == least
    assert result.dirty_exact and result.dirty_bound == want


@pytest.mark.parametrize(("n", "hot", "seed"), [(30, 12, 691278), (24, 20, 759319)])
def test_pieces_aligned_below_a_granule_stay_out_of_the_classes(
        n: int, hot: int, seed: int) -> None:
    """Records (found by a random search over 600) with a `u8[24]` (alignment 1, three
    granules' bytes): taken as a class block (alone, or with a 16-byte piece of the same
    lines footprints) it would have to start on a granule boundary, and the oracle would
    drop a child that reaches the least lines. The optimum must stay the plain one."""
    problem = _problem(n, hot, seed)
    least = _least_lines(problem)
    want, _, _ = _dirty(problem, least, 0)
    for groups in (0, 2):
        got, _, _ = _dirty(problem, least, 10**8, groups)
        assert got == want


def _threshold_dirty(problem: LayoutProblem, least: int, max_nodes: int = 10**8,
                     groups: int = 1, group_cap: int = 10**8,
                     oracle_cap: int = 10**8) -> tuple[int | None, bool, int]:
    """The threshold dirty search (the oracle bounds it): the dirty part of its last layout,
    whether it is proven, and its nodes."""
    scalar = bs._Search(problem, dirty=True)
    base = least * scalar.scale
    out, _ = bn.threshold(scalar, base + scalar.scale - 1, max_nodes, groups=groups,
                          group_size=3, group_cap=group_cap, floor=(least, scalar.scale),
                          oracle_cap=oracle_cap)
    return (None if out.cost is None else out.cost - base), out.complete, out.expanded


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_threshold_dirty_search_finds_the_plain_optimum(n: int, hot: int, seed: int) -> None:
    """Asked by threshold with the lines oracle as its bound (a state whose future lines
    the oracle proves above what the question leaves costs more than it), the dirty search
    ends with the plain search's optimum, with any groups and caps of its oracle."""
    problem = _problem(n, hot, seed)
    least = _least_lines(problem)
    want, _, _ = _dirty(problem, least, 0)
    for groups, cap in ((0, 10**8), (1, 10**8), (2, 40), (1, 1)):
        got, complete, _ = _threshold_dirty(problem, least, groups=groups, group_cap=cap)
        assert complete and got == want, (groups, cap)
    for oracle_cap in (1, 300):
        got, complete, _ = _threshold_dirty(problem, least, oracle_cap=oracle_cap)
        assert complete and got == want, oracle_cap


@pytest.mark.parametrize("seed", range(10))
def test_threshold_dirty_search_is_the_enumerated_one(seed: int) -> None:
    problem, want = _case(seed)
    got, complete, _ = _threshold_dirty(problem, want[0])
    assert complete and got == want[1]


def test_threshold_dirty_search_cut_proves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut by the budget, the threshold dirty search may hold a layout, but not a proof:
    block_search then reports no exact dirty lines. (One threshold plan with the whole
    lines budget and no extra for the dirty search, so that the lines phase takes the same
    nodes at both budgets and the dirty search gets a third of what it needs.)"""
    monkeypatch.setattr(bs, "THRESHOLD_PLANS", ((1, 6, None),))
    monkeypatch.setattr(bs, "THRESHOLD_LINES_SHARE", 1.0)
    monkeypatch.setattr(bs, "DIRTY_EXTRA_SHARE", 0.0)
    problem = _problem(60, 24, 1)
    least = _least_lines(problem)
    want, _, _ = _dirty(problem, least, 0)
    _, _, nodes = _threshold_dirty(problem, least)
    got, complete, used = _threshold_dirty(problem, least, max_nodes=nodes // 3)
    assert not complete
    assert used <= nodes // 3 + 1
    assert got is None or got >= want
    full = block_search(problem, upper=(least, 10**6), max_nodes=10**8)
    assert full.dirty_exact and full.dirty_bound == want
    dirty_used = full.nodes - full.lines_nodes
    result = block_search(problem, upper=(least, 10**6),
                          max_nodes=full.lines_nodes + dirty_used // 3)
    assert result.lines_exact and not result.dirty_exact


@pytest.mark.parametrize("part", [40, 10, 3])
def test_threshold_dirty_search_keeps_its_oracle_within_the_budget(part: int) -> None:
    """The oracle's work counts as the search's, and it may take only what the search has
    left, whatever its own cap: a search cut at a part of what it needs stays within its
    budget (up to the work of the question that crossed it)."""
    problem = _problem(60, 24, 1)
    least = _least_lines(problem)
    _, _, needed = _threshold_dirty(problem, least)
    max_nodes = needed // part
    assert max_nodes >= 100
    _, complete, used = _threshold_dirty(problem, least, max_nodes=max_nodes,
                                         group_cap=max_nodes, oracle_cap=10**8)
    assert not complete
    assert max_nodes <= used <= max_nodes * 1.05 + 50
