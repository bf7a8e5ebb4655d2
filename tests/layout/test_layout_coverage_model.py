"""The granule coverage CP-SAT model (bench/solver/coverage_model.py): exact cost, exact
optimum, valid bound.

Costs are checked against the per-start line count (`footprint_lines`) and optima against
the brute-force oracle of layout_synth, never against the model itself.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from layout_synth import Oracle, random_case, typed

from cachefit.layout import LayoutConstraints

# The model is an experiment the optimizer does not use: it lives with its bench script.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "solver"))
from coverage_model import (  # noqa: E402
    CoverageModel,
    HotCoverageRelaxation,
    OneHotCoverageRelaxation,
)

from cachefit.layout.line_cost import footprint_lines
from cachefit.layout.placement import place_order
from cachefit.layout.problem import build_problem


def problem_of(record, entry, **kw):
    opts = dict(cache_line=64, object_align=None, relax_align=False,
                constraints=LayoutConstraints(), allow_growth=False, merge=False)
    opts.update(kw)
    return build_problem(record, typed(entry), **opts)


def per_start_total(p, fps, offsets) -> int:
    return sum(fp.weight * footprint_lines(p, fp, offsets, s) for fp in fps for s in p.starts)


MODELS = [CoverageModel, HotCoverageRelaxation, OneHotCoverageRelaxation]


@pytest.mark.parametrize("cls", MODELS)
@pytest.mark.parametrize("seed", range(8))
def test_model_cost_of_a_fixed_layout_is_the_line_count_over_starts(seed: int, cls) -> None:
    rng = random.Random(100 + seed)
    record, entry = random_case(rng, max_fields=8)
    p = problem_of(record, entry, cache_line=rng.choice([16, 32, 64]),
                   object_align=rng.choice([None, 1, 2, 4, 8]))
    order = p.movable[:]
    rng.shuffle(order)
    pl = place_order(p, order)
    if pl.size > p.size_limit:
        pytest.skip("random order exceeds the size limit")
    model = cls(p)
    for u, k in model.k.items():
        model.m.add(k == pl.offsets[u] // p.units[u].align)
    lines, _ = model._stage("lines", model.lines_expr, 5.0)
    dirty, _ = model._stage("dirty", model.dirty_expr, 5.0)
    assert lines.value == per_start_total(p, p.lines_fp, pl.offsets)
    assert dirty.value == per_start_total(p, p.dirty_fp, pl.offsets)


@pytest.mark.parametrize("seed", range(10))
def test_model_optimum_equals_brute_force_and_relaxation_is_below(seed: int) -> None:
    rng = random.Random(200 + seed)
    record, entry = random_case(rng, max_fields=7)
    line = rng.choice([16, 32, 64])
    p = problem_of(record, entry, cache_line=line)
    oracle = Oracle(record, entry, cache_line=line, object_align=None)
    best_lines = oracle.best()[0]
    model = CoverageModel(p)
    out, _ = model._stage("lines", model.lines_expr, 20.0)
    assert out.optimal
    assert out.value == best_lines
    for cls in (HotCoverageRelaxation, OneHotCoverageRelaxation):
        relax = cls(p)
        rout, _ = relax._stage("lines", relax.lines_expr, 20.0)
        assert rout.optimal
        assert rout.value is not None and rout.value <= best_lines
