"""The native block search (block_native, native/cf_block_search.c).

Without partial expansion it must expand exactly as the plain statement of the search
(block_reference.best_first: same optimum, path, proven bound, expansions and states
queued, cut or complete, lines and dirty); with it (the default), the complete searches
must find the same optimum with fewer states, and cut searches must prove bounds that
never exceed the optimum and never fall as the budget grows. The state cap ends a search
like the budget. The library is built when cachefit is installed, never at run time.
The brute-force checks of block_search (test_layout_block_best_first.py,
test_layout_block_search.py) run through it too.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import block_reference as ref
import pytest
from layout_synth import large_case
from test_layout_block_search import problem_of

from cachefit.layout import block_native as bn
from cachefit.layout import block_search as bs
from cachefit.layout.block_search import applicable, block_search
from cachefit.layout.problem import LayoutProblem

CASES = [(40, 16, 2), (40, 20, 5), (60, 24, 1), (40, 28, 0)]


SOURCE = Path(bn.__file__).resolve().parent / "native" / "cf_block_search.c"
CFLAGS = ["-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra"]
"""pyproject.toml's flags for the extension, as a shared library."""


def _problem(n: int, hot: int, seed: int) -> LayoutProblem:
    record, entry = large_case(n, hot, seed)
    problem = problem_of(record, entry)
    assert applicable(problem)
    return problem


def _search(problem: LayoutProblem, dirty: bool, budget: int = 10**9) -> bs._Search:
    return bs._Search(problem, dirty=dirty)


def _limits(problem: LayoutProblem, dirty: bool) -> tuple[int, tuple[int, int] | None]:
    """A limit above every layout, and the dirty search's floor at the optimum's lines."""
    lines = _search(problem, False)
    best, _ = bn.best_first(lines, 10**9, 10**8)
    assert best.complete and best.cost is not None
    if not dirty:
        return best.cost + 1, None
    scalar = _search(problem, True)
    return best.cost * scalar.scale + 10**6, (best.cost, scalar.scale)


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_native_expands_as_the_plain_search(n: int, hot: int, seed: int) -> None:
    problem = _problem(n, hot, seed)
    compared = cut = 0
    for dirty in (False, True):
        limit, floor = _limits(problem, dirty)
        for budget in (1, 50, 700, 4000, 10**6):
            want = ref.best_first(_search(problem, dirty), limit, floor, budget)
            got, status = bn.best_first(_search(problem, dirty), limit, budget, floor,
                                        partial=False)
            assert (got.cost, got.path, got.bound, got.complete, got.expanded,
                    got.queued) == want[:6], (dirty, budget)
            assert (status == bn.NODES) == (not want[3])
            compared += want[4]
            cut += not want[3]
    assert compared > 5000 and 0 < cut < 10


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_partial_expansion_keeps_the_optimum_and_the_bounds(n: int, hot: int,
                                                            seed: int) -> None:
    problem = _problem(n, hot, seed)
    for dirty in (False, True):
        limit, floor = _limits(problem, dirty)
        exact, _ = bn.best_first(_search(problem, dirty), limit, 10**8, floor,
                                 partial=False)
        partial, _ = bn.best_first(_search(problem, dirty), limit, 10**8, floor)
        assert exact.complete and partial.complete
        assert partial.cost == exact.cost is not None
        # fewer states kept; the lines search's limit is the optimum's, so few are queued
        # above it either way, the dirty search's is far above
        assert partial.queued < exact.queued if dirty else partial.queued <= exact.queued
        # the path is a layout of that cost
        search = _search(problem, dirty)
        assert partial.path is not None and len(partial.path) == sum(search.counts0)
        bounds = []
        for budget in (1, 10, 100, 1000, 10**4):
            cut, status = bn.best_first(_search(problem, dirty), limit, budget, floor)
            assert cut.bound <= exact.cost, (dirty, budget)
            if cut.complete:
                assert cut.cost == exact.cost
            else:
                assert status == bn.NODES and cut.expanded == budget
            bounds.append(cut.bound)
        assert bounds == sorted(bounds)
        assert dirty or bounds[0] < bounds[-1]


def test_partial_paths_cost_what_they_claim() -> None:
    """The path of a partial-expansion optimum, replayed through the plain moves, costs
    exactly the optimum (lines search and dirty search)."""
    problem = _problem(40, 20, 5)
    for dirty in (False, True):
        limit, floor = _limits(problem, dirty)
        search = _search(problem, dirty)
        out, _ = bn.best_first(search, limit, 10**8, floor)
        assert out.path is not None and out.cost is not None
        assert ref.replay(search, out.path) == out.cost


def test_state_cap_ends_the_search_with_a_valid_bound() -> None:
    problem = _problem(60, 24, 1)
    limit, _ = _limits(problem, False)
    optimum = limit - 1
    root = _search(problem, False).root_bound()
    for cap in (200, 2000):
        out, status = bn.best_first(_search(problem, False), limit, 10**8,
                                    max_states=cap)
        assert status == bn.STATES and not out.complete and out.cost is None
        assert root <= out.bound <= optimum
        assert out.queued == cap + 1


def test_library_is_built_at_install_time() -> None:
    """The library is the package's extension module (pyproject.toml), built by pip; the
    module compiles nothing and keeps nothing in the user's cache."""
    spec = importlib.util.find_spec(bn.LIBRARY)
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).parent == Path(bn.__file__).resolve().parent
    assert bn.library() is bn.library()
    text = Path(bn.__file__).read_text()
    assert "subprocess" not in text and "cache_dir" not in text


def test_a_missing_library_is_an_installation_error(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = _problem(40, 16, 2)
    monkeypatch.setattr(bn, "_lib", None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(bn.NotBuilt, match="not built"):
        block_search(problem, upper=(10**9, 0), max_nodes=10**6)


def test_numbers_that_do_not_fit_are_not_searched() -> None:
    """A search the C form cannot hold is not run: the root's bound, nothing proven."""
    problem = _problem(40, 16, 2)
    search = _search(problem, False)
    assert bn.fits(search, 10**9)
    assert not bn.fits(search, 2**62)
    result = block_search(problem, upper=(2**62, 0), max_nodes=10**6)
    assert result.nodes == 0 and not result.lines_exact and result.dirty_bound is None
    assert result.lines_bound == search.root_bound()


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_source_compiles_without_warnings(cc: str, tmp_path: Path) -> None:
    proc = subprocess.run([cc, *CFLAGS, "-Werror", str(SOURCE), "-o",
                           str(tmp_path / "lib.so")], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


GROUP_CONFIGS = [(1, 2, 10**6), (2, 2, 10**6), (1, 3, 10**6), (1, 64, 10**6), (2, 3, 50)]


@pytest.mark.parametrize("config", GROUP_CONFIGS)
@pytest.mark.parametrize("seed", range(6))
def test_group_bounds_never_exceed_the_enumerated_optimum(
        seed: int, config: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """With group bounds (any groups, sizes and caps, including one group of every lines
    footprint, whose value is the relaxation's optimum itself, and a cap so small the
    groups die), the lines and dirty bounds at any budget stay at or below the enumerated
    optimum, rise with the budget, and the complete searches find it."""
    from test_layout_block_best_first import BUDGETS, _case

    problem, want = _case(seed)
    monkeypatch.setattr(bs, "GROUPS", (config, config))
    lines, dirty = [], []
    for budget in BUDGETS + (10**6,):
        result = block_search(problem, upper=(want[0] + 1, want[1] + 5), max_nodes=budget)
        assert result.lines_bound <= want[0], (budget, result)
        lines.append(result.lines_bound)
        if result.lines_exact:
            assert result.lines_bound == want[0]
        full = block_search(problem, upper=(want[0], want[1] + 5), max_nodes=budget)
        if full.lines_exact and full.dirty_bound is not None:
            assert full.dirty_bound <= want[1], (budget, full)
            dirty.append(full.dirty_bound)
    assert lines == sorted(lines) and lines[-1] == want[0]
    assert dirty == sorted(dirty) and dirty and dirty[-1] == want[1]


@pytest.mark.parametrize(("n", "hot", "seed"), CASES)
def test_group_bounds_keep_the_optimum_with_fewer_states(n: int, hot: int, seed: int) -> None:
    problem = _problem(n, hot, seed)
    for dirty in (False, True):
        limit, floor = _limits(problem, dirty)
        plain, _ = bn.best_first(_search(problem, dirty), limit, 10**8, floor,
                                 partial=not dirty)
        grouped, _ = bn.best_first(_search(problem, dirty), limit, 10**8, floor,
                                   partial=not dirty, groups=2, group_size=3)
        assert plain.complete and grouped.complete
        assert grouped.cost == plain.cost
        assert grouped.queued <= plain.queued
