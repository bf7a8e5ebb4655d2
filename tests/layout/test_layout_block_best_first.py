"""block_search's best-first search (block_best_first): exact, and a valid bound at any budget.

Checked against the enumeration of free placements of the hot units (the relaxation's
optimum, lines then dirty lines) and against the depth-first search: with enough budget
it finds the same optimum; with too little, its lines bound and its dirty bound never
exceed the enumerated optimum and rise with the budget; results are deterministic.
"""

from __future__ import annotations

import random

import pytest
from layout_synth import large_case
from test_layout_block_search import (
    enumerate_relaxation,
    problem_of,
    relaxed_cost,
    small_unaligned_case,
)

from cachefit.layout import block_search as bs
from cachefit.layout.block_search import applicable, block_search

BUDGETS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)


def _case(seed: int) -> tuple[object, tuple[int, int]]:
    rng = random.Random(7000 + seed)
    record, entry = small_unaligned_case(rng, hot=rng.randint(3, 4))
    problem = problem_of(record, entry)
    if not applicable(problem):
        pytest.skip("cache-aligned record")
    return problem, enumerate_relaxation(problem, max_gap=problem.object_align)


@pytest.mark.parametrize("seed", range(10))
def test_lines_bound_at_any_budget_is_below_the_optimum(seed: int) -> None:
    problem, want = _case(seed)
    bounds = []
    for budget in BUDGETS + (10**6,):
        result = block_search(problem, upper=(want[0] + 1, 0), max_nodes=budget)
        assert result.lines_bound <= want[0], (budget, result)
        if result.lines_exact:
            assert result.lines_bound == want[0]
            assert result.found and relaxed_cost(problem, result.found[0])[0] == want[0]
        bounds.append(result.lines_bound)
    assert bounds == sorted(bounds), "the proven bound must not fall with more budget"
    assert bounds[-1] == want[0]


@pytest.mark.parametrize("seed", range(10))
def test_dirty_bound_at_any_budget_is_below_the_optimum(seed: int) -> None:
    """From the optimum's lines (proven first), the dirty search's bound, complete or
    cut by the budget, never exceeds the least dirty lines among lines-optimal layouts."""
    problem, want = _case(seed)
    dirty = []
    for budget in BUDGETS + (10**6,):
        result = block_search(problem, upper=(want[0], want[1] + 5), max_nodes=budget)
        if not result.lines_exact:
            continue
        assert result.lines_bound == want[0]
        if result.dirty_bound is not None:
            assert result.dirty_bound <= want[1], (budget, result)
            if result.dirty_exact:
                assert result.dirty_bound == want[1]
            dirty.append(result.dirty_bound)
    assert dirty and dirty[-1] == want[1]
    assert dirty == sorted(dirty)


@pytest.mark.parametrize("seed", range(8))
def test_best_first_and_depth_first_agree(seed: int) -> None:
    problem, want = _case(100 + seed)
    for upper in ((want[0] + 1, 0), want, (want[0], want[1] + 3)):
        a = block_search(problem, upper=upper, max_nodes=10**6)
        b = block_search(problem, upper=upper, max_nodes=10**6, method="dfs")
        assert (a.lines_bound, a.lines_exact, a.dirty_bound, a.dirty_exact) == \
            (b.lines_bound, b.lines_exact, b.dirty_bound, b.dirty_exact)
        # the lines search returns a lines-optimal layout (any dirty); the dirty search
        # the lexicographic optimum
        assert len(a.found) == len(b.found)
        for i, (ta, tb) in enumerate(zip(a.found, b.found, strict=True)):
            ca, cb = relaxed_cost(problem, ta), relaxed_cost(problem, tb)
            assert ca == cb if i else ca[0] == cb[0]


def test_partial_bounds_rise_above_the_per_footprint_bound() -> None:
    """Cut by the budget, the best-first bound is the smallest bound still queued; on a
    mid-size record (16 hot fields of 40) it climbs above the root's per-footprint bound
    before the search ends (the depth-first search proves only exhausted thresholds), and
    the same budget gives the same result twice."""
    record, entry = large_case(40, 16, 2)
    problem = problem_of(record, entry)
    assert applicable(problem)
    search = bs._Search(problem, dirty=False, counter=bs._Counter(10**9, None))
    root = search.root_bound()
    full = block_search(problem, upper=(10**9, 0), max_nodes=10**6)
    assert full.lines_exact and full.lines_bound > root
    partial = [block_search(problem, upper=(full.lines_bound, 0), max_nodes=n)
               for n in (100, 400)]
    bounds = [p.lines_bound for p in partial]
    assert not any(p.lines_exact for p in partial)
    assert root < bounds[0] < bounds[1] < full.lines_bound
    again = block_search(problem, upper=(full.lines_bound, 0), max_nodes=400)
    assert again == partial[1]
