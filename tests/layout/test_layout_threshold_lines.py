"""The native threshold lines search (docs/layout.md, "Threshold lines search").

It asks "is the least cost at most hi?" of the root, follows a yes down to a layout and
asks again below it; a no proves the last layout optimal. Against enumeration and against
the best-first search it must find the same least lines, with paths that cost what they
claim; cut by the budget, the states cap or its group caps its bound must stay at or below
the optimum and rise with the budget, and a layout it returns must be below the limit.
"""

from __future__ import annotations

import block_reference as ref
import pytest
from test_layout_block_best_first import _case
from test_layout_block_native import _problem, _search

from cachefit.layout import block_native as bn
from cachefit.layout import block_search as bs

CASES = [(40, 16, 2), (40, 20, 5), (60, 24, 1), (40, 28, 0), (30, 18, 3), (50, 22, 4),
         (60, 32, 7)]


def _replayed(search: bs._Search, path: tuple[tuple[int, int], ...]) -> int:
    """The cost of a path replayed through the plain moves (every piece placed once, the
    mirror pair in any order)."""
    search.mirror = None
    return ref.replay(search, path)


def _best_first_optimum(problem: object) -> int:
    out, _ = bn.best_first(_search(problem, False), 10**12, 10**8)
    assert out.complete and out.cost is not None
    return out.cost


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
@pytest.mark.parametrize("groups", [0, 1, 2])
def test_threshold_finds_the_best_first_optimum(n: int, hot: int, seed: int,
                                                groups: int) -> None:
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    search = _search(problem, False)
    out, status = bn.threshold(search, 10**12, 10**8, groups=groups)
    assert status == bn.FOUND and out.complete
    assert out.cost == want == out.bound
    assert out.path is not None and _replayed(search, out.path) == want
    # from a limit at the optimum nothing is below it; just above, the optimum itself
    at, status = bn.threshold(_search(problem, False), want, 10**8, groups=groups)
    assert status == bn.NONE and at.complete and at.cost is None and at.bound >= want
    above, _ = bn.threshold(_search(problem, False), want + 1, 10**8, groups=groups)
    assert above.complete and above.cost == want


def test_the_mirror_pair_is_placed_in_order_and_saves_nodes() -> None:
    """With a mirror pair (p, q), q moves only after p: the optimum is the same, its path
    places p first, and the search expands fewer states over these records."""
    with_pair = without = 0
    checked = 0
    for n, hot, seed in CASES:
        problem = _problem(n, hot, seed)
        search = _search(problem, False)
        if search.mirror is None:
            continue
        p, q = search.mirror
        out, _ = bn.threshold(search, 10**12, 10**8, groups=1)
        plain = _search(problem, False)
        plain.mirror = None
        free, _ = bn.threshold(plain, 10**12, 10**8, groups=1)
        assert out.complete and free.complete and out.cost == free.cost
        assert out.path is not None
        types = [ti for ti, _o in out.path]
        assert types.index(p) < types.index(q)
        with_pair += out.expanded
        without += free.expanded
        checked += 1
    assert checked >= 3
    assert with_pair < without


@pytest.mark.parametrize("seed", range(10))
def test_threshold_finds_the_enumerated_optimum(seed: int) -> None:
    problem, want = _case(seed)
    for groups in (0, 1, 2):
        search = _search(problem, False)
        out, _ = bn.threshold(search, want[0] + 1, 10**6, groups=groups, group_size=2)
        assert out.complete and out.cost == want[0], groups
        assert out.path is not None and _replayed(search, out.path) == want[0]


@pytest.mark.parametrize(("n", "hot", "seed"), CASES[:4])
def test_a_cut_threshold_search_gives_a_rising_valid_bound(n: int, hot: int,
                                                           seed: int) -> None:
    """Cut at any budget: status NODES, a bound at or below the optimum, rising with the
    budget; a layout it returns is below the limit and costs what it claims."""
    problem = _problem(n, hot, seed)
    want = _best_first_optimum(problem)
    limit = 10**12
    bounds = []
    cut_layouts = 0
    for budget in (1, 10, 100, 1000, 10**4, 10**5):
        search = _search(problem, False)
        out, status = bn.threshold(search, limit, budget, groups=1)
        assert out.bound <= want, budget
        if out.complete:
            assert out.cost == want
        else:
            assert status == bn.NODES and out.expanded >= budget
        if out.path is not None:
            assert out.cost is not None and out.cost < limit
            assert _replayed(search, out.path) == out.cost >= want
            cut_layouts += not out.complete
        bounds.append(out.bound)
    assert bounds == sorted(bounds) and bounds[0] < bounds[-1]
    assert cut_layouts >= 1


@pytest.mark.parametrize("cap", [1, 40, 10**8])
def test_group_caps_keep_the_optimum(cap: int) -> None:
    """A group whose threshold programme reaches its cap dies (its footprints go back to
    their plain terms): the search still ends with the optimum."""
    for n, hot, seed in CASES[:3]:
        problem = _problem(n, hot, seed)
        want = _best_first_optimum(problem)
        out, _ = bn.threshold(_search(problem, False), 10**12, 10**8, groups=2,
                              group_cap=cap)
        assert out.complete and out.cost == want


def test_state_cap_ends_it_with_a_valid_bound() -> None:
    problem = _problem(60, 24, 1)
    want = _best_first_optimum(problem)
    root = _search(problem, False).root_bound()
    for cap in (200, 2000):
        out, status = bn.threshold(_search(problem, False), 10**12, 10**8,
                                   max_states=cap)
        assert status == bn.STATES and not out.complete
        assert root <= out.bound <= want
        assert out.queued == cap


def test_block_search_uses_it_and_proves_the_lines() -> None:
    """block_search's native lines phase is the threshold search: a proven optimum (the
    best-first one) and its layout among the results."""
    assert bs.THRESHOLD_LINES_SHARE > 0
    problem = _problem(40, 20, 5)
    want = _best_first_optimum(problem)
    result = bs.block_search(problem, upper=(want + 500, 10**6), max_nodes=10**7)
    assert result.lines_exact and result.lines_bound == want
    assert result.found


@pytest.mark.parametrize("share", [0.0005, 0.02, 0.5, 1.0])
def test_a_cut_threshold_search_hands_over_to_best_first(share: float,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """With any share of the budget for the threshold search, block_search's lines bound
    stays at or below the optimum at every budget, and with enough budget the lines are
    proven (by the threshold search, or by the best-first search below its layout)."""
    monkeypatch.setattr(bs, "THRESHOLD_LINES_SHARE", share)
    for n, hot, seed in CASES[:3]:
        problem = _problem(n, hot, seed)
        want = _best_first_optimum(problem)
        for budget in (300, 3000, 30000, 10**7):
            result = bs.block_search(problem, upper=(want + 700, 10**6), max_nodes=budget)
            assert result.lines_bound <= want, (share, budget)
            if result.lines_exact:
                assert result.lines_bound == want and result.found
        assert result.lines_exact, share
