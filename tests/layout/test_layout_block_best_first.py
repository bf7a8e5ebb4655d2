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
from cachefit.layout.block_search import applicable, block_search, natural

BUDGETS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144)


def _case(seed: int) -> tuple[object, tuple[int, int]]:
    rng = random.Random(7000 + seed)
    record, entry = small_unaligned_case(rng, hot=rng.randint(3, 4))
    problem = problem_of(record, entry)
    if not applicable(problem) or natural(problem):
        pytest.skip("cache-aligned record (test_layout_natural_search)")
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
    # the Python search: the native one spends its first nodes on the group bounds
    # (test_layout_block_native.py checks its bounds against the budget)
    full = block_search(problem, upper=(10**9, 0), max_nodes=10**6, native=False)
    assert full.lines_exact and full.lines_bound > root
    partial = [block_search(problem, upper=(full.lines_bound, 0), max_nodes=n, native=False)
               for n in (100, 400)]
    bounds = [p.lines_bound for p in partial]
    assert not any(p.lines_exact for p in partial)
    assert root < bounds[0] < bounds[1] < full.lines_bound
    again = block_search(problem, upper=(full.lines_bound, 0), max_nodes=400, native=False)
    assert again == partial[1]


def _reference_run(search: bs._Search, limit: int, floor: tuple[int, int] | None
                   ) -> tuple[int | None, tuple[tuple[int, int], ...] | None, int, bool, int,
                              int, list[tuple[int, int]]]:
    """The best-first search written plainly (as before H2's table-driven version), from
    `_Search.children` and `_Search.base_bound`: same states, order, prunings and budget.
    Returns (cost, path, bound, complete, expanded, queued, expansions as (f, g))."""
    import heapq

    def lift(v: int, sep: int | None = None) -> int:
        # below the floor: its lines, and the dirty part of the separate terms (`sep`)
        if floor is None or v >= floor[0] * floor[1]:
            return v
        return floor[0] * floor[1] + (v if sep is None else sep) % floor[1]

    nt, nfp, fidx, weight = len(search.types), search.nfp, search.fidx, search.weight
    sizes = [t.size for t in search.types]
    ages0 = tuple(a if search.left0[i] else 0 for i, a in enumerate(search.ages0))
    cmod0 = search.start % search.g
    start = bytes(search.counts0) + bytes((cmod0,)) + bytes(ages0)
    g0 = search.fixed_cost
    heap = [(lift(g0 + search.base_bound(search.left0, ages0, cmod0)[0]), -g0, 0, start, -2,
             -1)]
    best_g = {start: g0}
    parents: list[int] = []
    moves: list[int] = []
    closed: dict[bytes, list[tuple[bytes, int]]] = {}
    order: list[tuple[int, int]] = []
    seq = front = 0

    def path(node: int) -> tuple[tuple[int, int], ...]:
        out = []
        while node >= 0 and moves[node] >= 0:
            out.append(divmod(moves[node], 256))
            node = parents[node]
        return tuple(reversed(out))

    try:
        while heap:
            f, neg_g, sq, state, ref, move = heapq.heappop(heap)
            front, g = f, -neg_g
            if best_g.get(state, g) < g:
                continue
            counts, cmod, ages = tuple(state[:nt]), state[nt], tuple(state[nt + 1:])
            if any(counts):
                seen = closed.setdefault(state[:nt + 1], [])
                if seen and not ref & 1 and any(
                        g - c1 >= sum(weight[i] * max(0, x - ages[i])
                                      for i, x in enumerate(a1)) for a1, c1 in seen):
                    continue
                if not ref & 1 and len(seen) < 64:
                    seen.append((state[nt + 1:], g))
            left = [sum(c * sizes[t] for t, c in enumerate(counts) if i in fidx[t])
                    for i in range(nfp)]
            if not ref & 1 and any(counts):
                full = lift(g + search.lower_bound(left, ages, cmod, counts),
                            g + search.base_bound(left, ages, cmod)[0])
                if full > f:
                    if full < limit:
                        heapq.heappush(heap, (full, neg_g, sq, state, ref | 1, move))
                    continue
            search.counter.tick()
            order.append((f, g))
            me = len(parents)
            parents.append(ref >> 1)
            moves.append(move)
            if not any(counts):
                return g, path(me), g, True, len(order), len(best_g), order
            for ti, o, add, ncmod, nages in search.children(counts, cmod, ages):
                nleft = list(left)
                for i in fidx[ti]:
                    nleft[i] -= sizes[ti]
                kept = bytes(0 if not nleft[i] else a for i, a in enumerate(nages))
                ng = g + add
                nf = max(f, lift(ng + search.base_bound(nleft, kept, ncmod)[0]))
                if nf >= limit:
                    continue
                ncounts = bytearray(state[:nt])
                ncounts[ti] -= 1
                nstate = bytes(ncounts) + bytes((ncmod,)) + kept
                if best_g.get(nstate, limit) <= ng:
                    continue
                best_g[nstate] = ng
                seq += 1
                heapq.heappush(heap, (nf, -ng, seq, nstate, me * 2, ti * 256 + o))
    except bs._Budget:
        return None, None, front, False, len(order), len(best_g), order
    return None, None, limit, True, len(order), len(best_g), order


@pytest.mark.parametrize(("n", "hot", "seed"), [(40, 16, 2), (40, 20, 5), (60, 24, 1)])
def test_best_first_expands_as_the_plain_search(n: int, hot: int, seed: int) -> None:
    """The table-driven search (incremental bounds, packed queue keys) does what the plain
    one does, for the lines search and the dirty search over lines * M + dirty, complete
    or cut by the budget: same optimum, path, proven bound, expansions and states queued."""
    from cachefit.layout import block_best_first as bbf

    record, entry = large_case(n, hot, seed)
    problem = problem_of(record, entry)
    assert applicable(problem)
    lines = bs._Search(problem, dirty=False, counter=bs._Counter(10**9, None))
    optimum = block_search(problem, upper=(10**9, 0), max_nodes=10**6)
    assert optimum.lines_exact
    lb = optimum.lines_bound
    checked = complete = 0
    for budget in (50, 700, 4000):
        for dirty in (False, True):
            searches = []
            for _ in range(2):
                s = bs._Search(problem, dirty=dirty, counter=bs._Counter(budget, None))
                searches.append(s)
            limit = lb + 1 if not dirty else lb * searches[0].scale + 10**6
            floor = None if not dirty else (lb, searches[0].scale)
            want = _reference_run(searches[0], limit, floor)
            got = bbf.best_first(searches[1], limit, bs._Budget, floor=floor)
            assert (got.cost, got.path, got.bound, got.complete, got.expanded,
                    got.queued) == want[:6], (budget, dirty)
            checked += want[4]
            complete += want[3]
    assert lines.root_bound() <= lb
    # both kinds of run compared: cut by the budget (6 runs in all) and ended by itself
    assert checked > 1000 and complete < 6 and (complete or n > 40), (checked, complete)


def test_the_floor_keeps_the_dirty_optimum_when_the_penalty_mixes_lines_and_dirty() -> None:
    """A record found by a random search (35 fields, 32-byte lines) on which the
    next-granule penalty's least option has fewer lines but more dirty lines than the
    optimum's completion. Raising that bound's lines to the floor and keeping its dirty
    part dropped the optimum (the dirty search ended at a worse layout and called it
    optimal). With the floor, the native searches (with and without partial expansion)
    and the Python one must end where the search without a floor does."""
    from cachefit.layout import block_native as bn
    from cachefit.layout.block_best_first import best_first

    record, entry = large_case(35, 21, 685050)
    problem = problem_of(record, entry, line=32)
    lines = bs._Search(problem, dirty=False, counter=bs._Counter(10**9, None))
    least = best_first(lines, 10**12, bs._Budget).cost
    assert least is not None

    def scalar() -> bs._Search:
        return bs._Search(problem, dirty=True, counter=bs._Counter(10**9, None))

    limit = (least + 1) * scalar().scale - 1
    plain = best_first(scalar(), limit, bs._Budget)
    assert plain.complete and plain.cost is not None
    floored = best_first(scalar(), limit, bs._Budget, floor=(least, scalar().scale))
    assert floored.cost == plain.cost
    if bn.available():
        for partial in (False, True):
            out, _ = bn.best_first(scalar(), limit, 10**8, (least, scalar().scale),
                                   partial=partial)
            assert out.complete and out.cost == plain.cost, partial


def test_the_dirty_search_gets_its_extra_share_once_the_lines_are_proven(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the lines are proven, the dirty search may spend DIRTY_EXTRA_SHARE of the budget
    beyond it (up to the work of the question that crosses the limit, as without it), and
    its bound is then at least the one without the extra; on some of these records and
    budgets the extra is what completes the dirty proof."""
    completed_by_extra = 0
    for seed in range(10):
        problem, want = _case(seed)
        for budget in BUDGETS:
            monkeypatch.setattr(bs, "DIRTY_EXTRA_SHARE", 0.0)
            plain = block_search(problem, upper=(want[0], want[1] + 5), max_nodes=budget)
            monkeypatch.setattr(bs, "DIRTY_EXTRA_SHARE", 0.5)
            extra = block_search(problem, upper=(want[0], want[1] + 5), max_nodes=budget)
            assert extra.lines_nodes == plain.lines_nodes
            assert extra.lines_exact == plain.lines_exact
            if not plain.lines_exact:             # no dirty search, no extra
                assert extra.nodes == plain.nodes
                continue
            assert extra.nodes <= (budget + budget // 2) * 1.05 + 50, (seed, budget, extra)
            assert extra.nodes >= plain.nodes, (seed, budget)
            if plain.dirty_bound is not None:
                assert extra.dirty_bound is not None
                assert plain.dirty_bound <= extra.dirty_bound <= want[1], (seed, budget)
            if extra.dirty_exact:
                assert extra.dirty_bound == want[1]
                completed_by_extra += not plain.dirty_exact
    assert completed_by_extra > 0
