"""line_arrangement: the line models' assignments as C orders of cache-aligned records.

Properties on random records: the line assignment of any C order, with its lines
relabelled at random, is arranged again (the arrangement keeps every unit in the lines it
was assigned, so every footprint touches the same lines), at aligned, disjoint offsets;
what cannot be arranged is refused (a fixed area, three spread units in one line, a cycle,
a unit C cannot split); `respread` shares a class model solution out among the units
within the class's lines (a unit over three lines whole in the middle one); the line
model's split bytes are multiples of the alignment in every C order (the cut it relies
on), and every C order is a solution of the tight class model; and end to end, the
optimizer proves bench records through the class model that it could not prove before.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import replace
from typing import Any

import pytest
from layout_synth import (
    Oracle,
    bench_synthetic,
    c_layout,
    large_case,
    profile_entry,
    random_case,
    typed,
)

from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.line_arrangement import Assignment, arrange_lines, respread
from cachefit.layout.line_model import LineModel
from cachefit.layout.placement import place_order
from cachefit.layout.problem import LayoutProblem, build_problem


def aligned_problem(record: Any, entry: dict[str, Any], line: int) -> LayoutProblem:
    return build_problem(record, typed(entry), cache_line=line, object_align=line,
                         relax_align=False, constraints=LayoutConstraints(),
                         allow_growth=False, merge=False)


def assignment_of(problem: LayoutProblem, offsets: dict[int, int] | tuple[int, ...],
                  units: list[int]) -> Assignment:
    """unit -> [(line, bytes there)] of a placement."""
    line = problem.line
    out: Assignment = {}
    for u in units:
        b, size = offsets[u], problem.units[u].size
        if size == 0:
            continue
        out[u] = [(ell, min(b + size, (ell + 1) * line) - max(b, ell * line))
                  for ell in range(b // line, (b + size - 1) // line + 1)]
    return out


def footprint_lines(problem: LayoutProblem, assignment: Assignment) -> list[int]:
    lines = {u: {ell for ell, _ in parts} for u, parts in assignment.items()}
    return [len(set().union(*(lines.get(u, set()) for u in fp.units)))
            for fp in problem.lines_fp + problem.dirty_fp]


def check_targets(problem: LayoutProblem, assignment: Assignment,
                  targets: dict[int, int]) -> None:
    """Aligned, disjoint, every unit placed, and the same lines per footprint."""
    assert set(targets) == {u for u in assignment if problem.units[u].size}
    spans = sorted((targets[u], targets[u] + problem.units[u].size) for u in targets)
    for (_b0, e0), (b1, _e1) in zip(spans, spans[1:], strict=False):
        assert e0 <= b1
    for u, at in targets.items():
        assert at % problem.units[u].align == 0
    again = assignment_of(problem, targets, list(targets))
    for u in targets:        # a unit's lines: as many as assigned (their labels change)
        assert len(again[u]) == len(assignment[u])
    assert footprint_lines(problem, again) == footprint_lines(problem, assignment)


def relabelled(assignment: Assignment, rng: random.Random) -> Assignment:
    lines = sorted({ell for parts in assignment.values() for ell, _ in parts})
    new = list(lines)
    rng.shuffle(new)
    to = dict(zip(lines, new, strict=True))
    return {u: [(to[ell], n) for ell, n in parts] for u, parts in assignment.items()}


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("NSEEDS", 60))))
def test_every_c_order_is_arranged_again(seed: int) -> None:
    rng = random.Random(7100 + seed)
    n = rng.randint(10, 30)
    record, entry = (random_case(rng, max_fields=8) if seed % 2
                     else large_case(n, rng.randint(4, min(12, n)), seed))
    line = rng.choice([16, 32, 64])
    problem = aligned_problem(record, entry, line)
    order = list(range(len(problem.units)))
    rng.shuffle(order)
    offsets = place_order(problem, order).offsets
    assignment = assignment_of(problem, offsets, sorted(problem.hot))
    shuffled = relabelled(assignment, rng)
    targets = arrange_lines(problem, shuffled)
    assert targets is not None, (record.fields, order)
    check_targets(problem, shuffled, targets)


def _three_field_problem() -> LayoutProblem:
    record, entry = large_case(12, 6, 3)
    return aligned_problem(record, entry, 64)


def test_what_cannot_be_arranged_is_refused() -> None:
    problem = _three_field_problem()
    hot = sorted(u for u in problem.hot if problem.units[u].size > 1)
    a, b, c = hot[:3]
    sizes = {u: problem.units[u].size for u in (a, b, c)}
    # three units spread from one line: it cannot both end with all of them
    three = {u: [(0, 1), (i + 1, sizes[u] - 1)] for i, u in enumerate((a, b, c))}
    assert arrange_lines(problem, three) is None
    # a cycle: a over lines 0-1, b over 1-2, c over 2-0
    cycle = {a: [(0, 1), (1, sizes[a] - 1)], b: [(1, 1), (2, sizes[b] - 1)],
             c: [(2, 1), (0, sizes[c] - 1)]}
    assert arrange_lines(problem, cycle) is None
    # a fixed area in front: lines are not interchangeable
    whole = {a: [(0, sizes[a])]}
    assert arrange_lines(problem, whole) is not None
    assert arrange_lines(replace(problem, prefix_end=8), whole) is None


def test_a_unit_c_cannot_split_is_refused_unless_respread() -> None:
    """An 8-byte, 8-aligned field never straddles a line in C: an assignment that splits
    it (as the class model's spread may) does not arrange; `respread` puts it whole in one
    of the class's lines."""
    problem = _three_field_problem()
    eight = next(u for u in sorted(problem.hot)
                 if problem.units[u].size == 8 and problem.units[u].align == 8)
    split = {eight: [(0, 6), (1, 2)]}
    assert arrange_lines(problem, split) is None
    again = respread(problem, split, {eight: eight}, 1.0)
    assert again is not None and len(again[eight]) == 1
    assert again[eight][0][0] in (0, 1)
    targets = arrange_lines(problem, again)
    assert targets is not None and targets[eight] % 8 == 0


def test_a_unit_over_three_lines_is_whole_in_the_middle_one_once_respread() -> None:
    """A 128-byte array over three lines fills the middle one in C. A class solution
    (the array and seven 8-byte fields: 60, 64 and 60 bytes in three lines, the first and
    last holding an int of another footprint each) that gives the array 12, 56 and 60
    bytes and a field the rest of the middle line (as 60 / 40 seed 254's did) does not
    arrange; `respread` shares the class out with the array whole in the middle line,
    and that arranges, the footprint still over three lines."""
    decls = [("big", "u8[128]", 128, 1)] + [(f"f{i}", "long", 8, 8) for i in range(7)] + \
        [("o1", "int", 4, 4), ("o2", "int", 4, 4), ("cold", "long", 8, 8)]
    record = c_layout("three", decls)
    f = {x.name: x for x in record.fields}
    entry = profile_entry(record, [
        (10, [[0, x.offset, 8, "r"] for x in record.fields[:8]]),
        (5, [[0, f["o1"].offset, 4, "r"]]), (3, [[0, f["o2"].offset, 4, "r"]])])
    problem = aligned_problem(record, entry, 64)
    unit = {problem.units[u].name: u for u in problem.hot}
    big, longs = unit["big"], [unit[f"f{i}"] for i in range(7)]
    solution = {big: [(0, 12), (1, 56), (2, 60)], longs[0]: [(1, 8)],
                unit["o1"]: [(0, 4)], unit["o2"]: [(2, 4)]}
    solution |= {u: [(0, 8)] for u in longs[1:]}
    assert arrange_lines(problem, solution) is None
    class_of = dict.fromkeys([big, *longs], big) | {unit["o1"]: unit["o1"],
                                                     unit["o2"]: unit["o2"]}
    again = respread(problem, solution, class_of, 1.0)
    assert again is not None
    assert max(n for _, n in again[big]) == 64 and len(again[big]) == 3
    targets = arrange_lines(problem, again)
    assert targets is not None
    check_targets(problem, again, targets)
    assert footprint_lines(problem, again)[0] == 3


@pytest.mark.parametrize("seed", range(12))
def test_respread_keeps_each_unit_in_its_class_lines(seed: int) -> None:
    """On the class model's solutions of random records: every unit in lines of its
    class, whole unless C can split it, split bytes multiples of its alignment, each line
    within its bytes; the footprints then touch no more lines than the class solution."""
    record, entry = large_case(24, 12, 400 + seed)
    problem = aligned_problem(record, entry, 64)
    model = LineModel(problem, classes=True)
    solution = model.solve(2.0)
    assert solution is not None
    out = respread(problem, solution.lines, model.group_of, 1.0)
    if out is None:
        pytest.skip("no unit assignment in the class's lines")
    class_lines: dict[int, set[int]] = defaultdict(set)
    for u, parts in solution.lines.items():
        class_lines[model.group_of[u]].update(ell for ell, _ in parts)
    per_line: dict[int, int] = defaultdict(int)
    for u, parts in out.items():
        unit = problem.units[u]
        assert {ell for ell, _ in parts} <= class_lines[model.group_of[u]]
        assert sum(n for _, n in parts) == unit.size
        if unit.size <= unit.align:
            assert len(parts) == 1
        for ell, n in parts:
            assert n > 0 and n % unit.align == 0
            per_line[ell] += n
    assert max(per_line.values()) <= problem.line
    assert all(a <= b for a, b in zip(footprint_lines(problem, out),
                                       footprint_lines(problem, solution.lines),
                                       strict=True))


@pytest.mark.parametrize("seed", range(20))
def test_split_bytes_are_multiples_of_the_alignment_in_every_c_order(seed: int) -> None:
    """The line model's cut (`LineModel._step`): in any C order of a cache-aligned record,
    each unit's bytes in each line, and each class's, are a multiple of the item's step."""
    rng = random.Random(8300 + seed)
    record, entry = large_case(rng.randint(12, 30), rng.randint(6, 14), seed)
    line = rng.choice([16, 32, 64])
    problem = aligned_problem(record, entry, line)
    for classes in (False, True):
        model = LineModel(problem, classes=classes, contiguous=not classes)
        order = list(range(len(problem.units)))
        rng.shuffle(order)
        offsets = place_order(problem, order).offsets
        assignment = assignment_of(problem, offsets, sorted(model.group_of))
        per_item: dict[tuple[int, int], int] = defaultdict(int)
        for u, parts in assignment.items():
            for ell, n in parts:
                per_item[(model.group_of[u], ell)] += n
        assert any(step > 1 for step in model.step.values())
        for (g, _ell), n in per_item.items():
            assert n % model.step[g] == 0, (classes, g, n, model.step[g])


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("NTIGHT", 30))))
def test_every_c_order_is_a_solution_of_the_tight_class_model(seed: int) -> None:
    """The tight class model's cuts (`LineModel._sums`, `LineModel._members`) hold in any
    C order of a cache-aligned record: the class lines and bytes of a random order (hot
    fields first), fixed in the model (as `hint` relabels them), leave it feasible; with
    the cuts' parts per line at one instead of two, some order does not."""
    from ortools.sat.python import cp_model

    rng = random.Random(9100 + seed)
    n = rng.randint(20, 60)
    record, entry = bench_synthetic().make_case(n, rng.randint(10, 2 * n // 3), 6, seed)
    line = rng.choice([16, 32, 64])
    problem = aligned_problem(record, entry, line)
    model = LineModel(problem, classes=True, tight=True)
    assert model.fluid
    # hot units first (in random order), so that the lines they touch are the model's
    # (`hint` relabels those only)
    hot = sorted(problem.hot)
    cold = [u for u in range(len(problem.units)) if u not in problem.hot]
    rng.shuffle(hot)
    rng.shuffle(cold)
    model.hint(place_order(problem, hot + cold).offsets)
    proto = model.m.Proto().solution_hint
    assert sum(proto.values) >= len(model.items)
    for index, value in zip(proto.vars, proto.values, strict=True):
        model.m.add(model.m.get_int_var_from_proto_index(index) == value)
    model.m.clear_hints()
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 20.0
    assert solver.solve(model.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE), (seed, line)


@pytest.mark.parametrize("seed, cost", [(17, (8354, 3411)), (31, (11515, 4288)),
                                        (52, (14015, 3513)), (42, (7988, 3064)),
                                        (65, (11443, 3877)), (37, (21871, 7397)),
                                        (44, (9179, 6579)), (110, (9676, 4657)),
                                        (127, (11819, 7583)), (164, (21266, 8765)),
                                        (254, (12738, 5969))])
def test_the_line_models_prove_bench_records_once_arranged(
        seed: int, cost: tuple[int, int]) -> None:
    """bench/solver 60 fields / 40 touched, cache-aligned: the class model's optimum
    (its bounds) realises as a C order once its lines are arranged (seed 31 after the
    classes are shared out again), and on seed 52 the unit model with its lines in any
    order proves 14 015 lines above the class model's 13 815 and its solution arranges,
    so the result is proven by the line models (before: seed 17 had a lines gap of 1.4 %,
    31 open dirty lines after 9 s, 52 a gap of 11.9 %); on seeds 42 and 65 the class
    model proves the dirty lines within its budget only with a footprint's line tied to
    its items both ways (`LineModel._objective`), and on 37 and 44 only with 0.75 of the
    line models' budget (`optimizer.CLASS_SHARE`); on 110 and 127 the class model's
    optimum cannot be arranged (its dirty bounds, 4 222 and 6 432, are too low) and the
    tight class model (`LineModel(tight=True)`) proves the dirty lines; on 164 and 254
    the class model's dirty stage proves them only when it goes on after its share
    (`optimizer.RESUME_SHARE`), and 254's optimum arranges only with `respread` keeping
    a 128-byte array whole in its middle line. The independent oracle agrees on the
    cost."""
    from cachefit.layout import optimize_layout

    record, entry = bench_synthetic().make_case(60, 40, 6, seed)
    result = optimize_layout(record, typed(entry), cache_line=64, object_align=64, time_limit=10.0)
    assert result.optimal and result.method.startswith("line model")
    oracle = Oracle(record, entry, cache_line=64, object_align=64)
    assert oracle.cost(result.order) == cost
