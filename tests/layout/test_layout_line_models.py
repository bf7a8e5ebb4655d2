"""The line-assignment relaxations: their bounds never exceed the true optimum (brute force),
and on kernel-like profiles with 40 touched fields the optimizer proves optimality.

The brute-force oracle is layout_synth's, independent of cachefit.layout.
"""

from __future__ import annotations

import random

import pytest
from layout_synth import (
    BENCH_SYNTHETIC,
    Oracle,
    bench_synthetic,
    c_layout,
    profile_entry,
    random_case,
    typed,
)

from cachefit.layout import optimize_layout
from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.line_model import LineModel
from cachefit.layout.problem import build_problem


def _problem(record, entry, line: int):
    return build_problem(record, typed(entry), cache_line=line, object_align=64,
                         relax_align=False, constraints=LayoutConstraints(),
                         allow_growth=False, merge=False)


@pytest.mark.parametrize("seed", range(12))
def test_line_model_bounds_are_below_brute_force(seed: int) -> None:
    rng = random.Random(500 + seed)
    record, entry = random_case(rng, max_fields=7)
    line = rng.choice([16, 32])
    oracle = Oracle(record, entry, cache_line=line, object_align=64)
    best_lines, _ = oracle.best()
    problem = _problem(record, entry, line)
    bounds = []
    # the class model, the contiguous unit model, the unit model with lines in any order
    for classes, contiguous in ((True, False), (False, True), (False, False)):
        model = LineModel(problem, classes=classes, contiguous=contiguous)
        solution = model.solve(5.0)
        assert solution is not None
        stage = solution.stage("lines")
        assert stage is not None and stage.bound is not None and stage.value is not None
        assert stage.bound <= best_lines, (classes, record.fields, entry["sequences"])
        bounds.append(stage.value if stage.status == "OPTIMAL" else stage.bound)
    # Classes relax the per-unit models, and lines in any order relax consecutive ones.
    assert bounds[0] <= bounds[2] <= bounds[1]
    # The tight class model (members and parts per line) adds cuts to the class model:
    # its bounds, lines then dirty lines, stay below the optimum and above the class one.
    solution = LineModel(problem, classes=True, tight=True).solve(5.0)
    assert solution is not None
    lines, dirty = solution.stage("lines"), solution.stage("dirty")
    assert lines is not None and lines.bound is not None and lines.value is not None
    assert bounds[0] <= lines.bound <= best_lines
    if lines.optimal and lines.value == best_lines and dirty is not None and \
            dirty.bound is not None:
        assert dirty.bound <= oracle.best()[1]


def test_classes_group_fields_with_the_same_footprints() -> None:
    rng = random.Random(3)
    record, entry = random_case(rng, max_fields=8)
    problem = _problem(record, entry, 32)
    model = LineModel(problem, classes=True)
    for g, members in model.members.items():
        sig = {(tuple(u in fp.units for fp in problem.lines_fp),
                tuple(u in fp.units for fp in problem.dirty_fp)) for u in members}
        assert len(sig) == 1, g
    signatures = [(tuple(members[0] in fp.units for fp in problem.lines_fp),
                   tuple(members[0] in fp.units for fp in problem.dirty_fp))
                  for members in model.members.values() if problem.units[members[0]].size]
    assert len(signatures) == len(set(signatures))




@pytest.mark.skipif(not BENCH_SYNTHETIC.is_file(), reason="bench/solver is not there")
@pytest.mark.parametrize(("fields", "touched", "seed"), [(60, 40, 1), (40, 28, 0)])
def test_forty_touched_fields_proven_optimal(fields: int, touched: int, seed: int) -> None:
    """Kernel-like synthetic records (bench/solver): up to 40 touched fields by 6 paths in
    up to three roles, cache-aligned objects, proven optimal well within 10 s (about 1 s
    idle; the bench has the other seeds, and one that is not proven)."""
    record, entry = bench_synthetic().make_case(fields, touched, 6, seed)
    result = optimize_layout(record, typed(entry), object_align=64, time_limit=10.0)
    assert len(result.hot_fields) == touched
    assert result.optimal, (result.lines_after, result.lines_lower_bound, result.method)
    assert result.gap == 0.0
    assert result.lines_after == pytest.approx(result.lines_lower_bound)
    assert result.dirty_after == pytest.approx(result.dirty_lower_bound)
    assert result.lines_after < result.lines_before


def test_more_field_classes_than_a_64_bit_mask_holds() -> None:
    # expat's XML_ParserStruct: 92 fields, 80-odd of them with footprints of their own. The
    # symmetry-breaking binary number of a free line had a coefficient 2^k per class, a
    # float beyond 2^63, and CP-SAT raised TypeError ("only accept integer values").
    n = 80
    record = c_layout("big", [(f"f{i}", "long", 8, 8) for i in range(n)])
    entry = profile_entry(record, [(i + 1, [[0, 8 * i, 8, "r"], [0, 8 * ((i + 1) % n), 8, "r"]])
                                   for i in range(n)])
    model = LineModel(_problem(record, entry, 64), classes=True)
    assert len(model.members) == n
    solution = model.solve(1.0)
    assert solution is not None
    stage = solution.stage("lines")
    assert stage is not None and stage.bound is not None
    result = optimize_layout(record, typed(entry), cache_line=64, object_align=64, time_limit=3)
    assert sorted(result.order) == sorted(f.name for f in record.fields)
