"""block_search: the exact search of the granule relaxation for unaligned objects.

Checked against independent brute force (layout_synth's oracle, and plain enumerations of
hot-unit placements written here): its bound never exceeds the best C layout, its
relaxed optimum equals an enumeration of all placements of the hot units at free offsets,
merging whole-granule units of one signature into blocks loses nothing, the optimizer
reports `optimal` only when brute force agrees, and results are deterministic.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from layout_synth import Oracle, access, c_layout, large_case, profile_entry, random_case, typed

from cachefit.layout import optimize_layout
from cachefit.layout.block_search import applicable, block_search, item_types, natural
from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.line_cost import per_invocation, simple_bound
from cachefit.layout.problem import LayoutProblem, align_up, build_problem


def problem_of(record: Any, entry: dict[str, Any], line: int = 64) -> LayoutProblem:
    return build_problem(record, typed(entry), cache_line=line, object_align=None,
                         relax_align=False, constraints=LayoutConstraints(),
                         allow_growth=False, merge=False)


def relaxed_cost(problem: LayoutProblem, offsets: dict[int, int]) -> tuple[int, int]:
    """(lines, dirty) of hot units at `offsets`, counted line by line at every start."""
    def lines(fps: Any) -> int:
        total = 0
        for fp in fps:
            for s in problem.starts:
                seen: set[int] = set()
                for u in fp.units:
                    size = problem.units[u].size
                    if size:
                        b = s + offsets[u]
                        seen.update(range(b // problem.line, (b + size - 1) // problem.line + 1))
                total += fp.weight * len(seen)
        return total
    return lines(problem.lines_fp), lines(problem.dirty_fp)


def enumerate_relaxation(problem: LayoutProblem, max_gap: int) -> tuple[int, int]:
    """Best (lines, dirty) over every order of the hot units and every gap of up to
    `max_gap` bytes before each one (aligned offsets, no overlap): free placements."""
    hot = sorted(problem.hot)
    best: tuple[int, int] | None = None
    for order in itertools.permutations(hot):
        choices = [range(0, max_gap + 1, problem.units[u].align) for u in order]
        for gaps in itertools.product(*choices):
            cursor = problem.prefix_end
            offsets: dict[int, int] = {}
            for u, gap in zip(order, gaps, strict=True):
                at = align_up(cursor, problem.units[u].align) + gap
                offsets[u] = at
                cursor = at + problem.units[u].size
            cost = relaxed_cost(problem, offsets)
            if best is None or cost < best:
                best = cost
    assert best is not None
    return best


def small_unaligned_case(rng: random.Random, hot: int) -> tuple[Any, dict[str, Any]]:
    types = [("char", 1, 1), ("short", 2, 2), ("int", 4, 4), ("long", 8, 8),
             ("long", 8, 8), ("long[2]", 16, 8), ("char[3]", 3, 1), ("int[3]", 12, 4)]
    n = hot + rng.randint(0, 2)
    record = c_layout("rnd", [(f"f{i}", *rng.choice(types)) for i in range(n)])
    names = [f.name for f in record.fields][:hot]
    sequences = []
    for _ in range(rng.randint(1, 4)):
        accesses = []
        for role in range(rng.randint(1, 2)):
            for name in rng.sample(names, rng.randint(1, hot)):
                accesses.append(access(record, role, name, rng.choice("rrw")))
        sequences.append((rng.randint(1, 9), accesses))
    # every hot field touched at least once
    sequences.append((1, [access(record, 0, n) for n in names]))
    return record, profile_entry(record, sequences)


@pytest.mark.parametrize("seed", range(12))
def test_relaxed_optimum_equals_enumeration_of_free_placements(seed: int) -> None:
    rng = random.Random(1000 + seed)
    record, entry = small_unaligned_case(rng, hot=rng.randint(2, 4))
    problem = problem_of(record, entry)
    if not applicable(problem) or natural(problem):
        pytest.skip("cache-aligned record (test_layout_natural_search)")
    want = enumerate_relaxation(problem, max_gap=problem.object_align)
    # an upper bound above anything: the search must find the relaxation's optimum
    result = block_search(problem, upper=(want[0] + 1, 0), max_nodes=10**6)
    assert result.lines_exact and result.lines_bound == want[0]
    assert result.found, "a relaxed layout below the upper bound must be returned"
    assert relaxed_cost(problem, result.found[0])[0] == want[0]
    # from the optimum itself: lines proven, and then the dirty lines
    result = block_search(problem, upper=want, max_nodes=10**6)
    assert result.lines_exact and result.lines_bound == want[0]
    assert result.dirty_bound == want[1]
    assert not result.found


@pytest.mark.parametrize("seed", range(25))
def test_bound_never_exceeds_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    record, entry = random_case(rng, max_fields=7)
    line = rng.choice([32, 64])
    problem = problem_of(record, entry, line)
    if not applicable(problem) or natural(problem):
        pytest.skip("cache-aligned record (test_layout_natural_search)")
    oracle = Oracle(record, entry, cache_line=line)
    lines, dirty = oracle.best()
    result = block_search(problem, upper=(lines, dirty), max_nodes=10**6)
    assert result.lines_exact
    assert result.lines_bound <= lines
    if not result.found:
        # nothing better in the relaxation: the bound is the optimum, and so is dirty
        assert result.lines_bound == lines
        assert result.dirty_bound == dirty
    for targets in result.found:
        assert relaxed_cost(problem, targets)[0] == result.lines_bound or \
            relaxed_cost(problem, targets)[0] < lines


def test_blocks_of_one_signature_lose_nothing() -> None:
    """Whole-granule units with the same footprints (lines and dirty) searched as one
    block or one by one give the same optimum, lines and dirty."""
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        decls = [(f"f{i}", *rng.choice([("long", 8, 8), ("long[2]", 16, 8), ("int", 4, 4),
                                          ("char", 1, 1), ("long", 8, 8)])) for i in range(7)]
        record = c_layout("blk", decls)
        names = [f.name for f in record.fields]
        cut = sorted(rng.sample(range(1, 7), 2))
        groups = [names[:cut[1]], names[cut[0]:], names[:cut[0]] + names[cut[1]:]]
        seqs = [(rng.randint(1, 9), [access(record, 0, n, rng.choice("rw")) for n in grp])
                for grp in groups]
        problem = problem_of(record, profile_entry(record, seqs))
        types, _ = item_types(problem, dirty=True)
        if all(len(copy) == 1 for t in types for copy in t.units):
            continue
        merged = block_search(problem, upper=(10**9, 0), max_nodes=10**6)
        single = block_search(problem, upper=(10**9, 0), max_nodes=10**6, merge=False)
        assert merged.lines_exact and single.lines_exact
        assert merged.lines_bound == single.lines_bound
        # dirty lines among the layouts with those lines
        top = (merged.lines_bound, 10**9)
        dirty_merged = block_search(problem, upper=top, max_nodes=10**6).dirty_bound
        dirty_single = block_search(problem, upper=top, max_nodes=10**6,
                                    merge=False).dirty_bound
        assert dirty_merged is not None and dirty_merged == dirty_single
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("seed", range(12))
def test_optimizer_optimal_only_when_brute_force_agrees(seed: int) -> None:
    rng = random.Random(500 + seed)
    record, entry = random_case(rng, max_fields=7)
    result = optimize_layout(record, typed(entry), cache_line=64, time_limit=20.0)
    oracle = Oracle(record, entry, cache_line=64)
    best = oracle.best()
    assert oracle.cost(result.order) == best
    assert result.lines_lower_bound <= oracle.per_invocation(best[0]) + 1e-9
    assert result.optimal


def test_mid_size_record_is_proven_by_block_search() -> None:
    """40 fields, 16 hot, objects aligned to 8 bytes only: more units than the exact
    circuit model takes, and the per-footprint bound is below the optimum; the optimizer
    proves the optimum with block_search's bound. Deterministic."""
    record, entry = large_case(40, 16, 1)
    problem = problem_of(record, entry)
    assert applicable(problem) and len(problem.units) > 32
    first = optimize_layout(record, typed(entry), time_limit=30.0)
    assert first.start_offsets == 8
    assert first.optimal, (first.method, first.gap)
    assert first.lines_after == pytest.approx(first.lines_lower_bound)
    simple = per_invocation(problem, simple_bound(problem, problem.lines_fp))
    assert simple < first.lines_lower_bound - 1e-6
    again = optimize_layout(record, typed(entry), time_limit=30.0)
    assert again.order == first.order and again.method == first.method
