"""The cost model: C placement, lines over object start offsets, lower bounds.

These tests check measurement only (hand-computed layouts and identities); they do not
run the optimizer.
"""

from __future__ import annotations

import random

from layout_synth import access, c_layout, profile_entry, random_case, typed

from cachefit.layout import LayoutConstraints, evaluate_order
from cachefit.layout.line_cost import (
    footprint_bound_total,
    footprint_lines,
    footprint_lines_total,
)
from cachefit.layout.placement import place_order
from cachefit.layout.problem import build_problem
from cachefit.model.record_layout import Base, Field, Record


def problem_of(record, entry, **kw):
    opts = dict(cache_line=64, object_align=None, relax_align=False,
                constraints=LayoutConstraints(), allow_growth=False, merge=False)
    opts.update(kw)
    return build_problem(record, typed(entry), **opts)


def test_c_placement_after_a_base_with_a_flexible_array() -> None:
    record = Record("D", "class", 48, 8, [
        Field("i", "int", 12, 4, 4), Field("p", "void *", 16, 8, 8),
        Field("c", "char", 24, 1, 1), Field("s", "short", 26, 2, 2),
        Field("tail", "long []", 32, 0, 8)], bases=[Base("B", 0, 12)])
    entry = profile_entry(record, [])
    ev = evaluate_order(record, typed(entry), ["p", "tail", "c", "i", "s"])
    # after the 12-byte base: p at 16, c at 24, i at 28, s at 32; tail last at 40
    assert ev.order == ("p", "c", "i", "s", "tail")
    assert ev.offsets == {"p": 16, "c": 24, "i": 28, "s": 32, "tail": 40}
    assert ev.size == 40
    assert ev.violations == ()


def test_expected_and_worst_lines_for_unaligned_objects() -> None:
    record = c_layout("s", [("a", "long[2]", 16, 8), ("b", "char[48]", 48, 1)])
    entry = profile_entry(record, [(1, [access(record, 0, "a")])])
    ev = evaluate_order(record, typed(entry), ["a", "b"])        # objects 8-aligned: 8 starts
    # a occupies [s, s+16): two lines only when it starts at 56
    assert ev.figures.lines == 9 / 8 and ev.figures.lines_worst == 2
    aligned = evaluate_order(record, typed(entry), ["a", "b"], object_align=64)
    assert aligned.figures.lines == aligned.figures.lines_worst == 1


def test_window_identity_and_bounds_on_random_layouts() -> None:
    rng = random.Random(11)
    for _ in range(40):
        record, entry = random_case(rng, max_fields=8)
        align = rng.choice([1, 2, 4, 8, 16])
        p = problem_of(record, entry, cache_line=32, object_align=align)
        order = p.movable[:]
        rng.shuffle(order)
        offsets = place_order(p, order).offsets
        g = len(p.starts)
        for fp in p.lines_fp:
            total = sum(footprint_lines(p, fp, offsets, s) for s in p.starts)
            assert total >= footprint_bound_total(p, fp)
            if g > 1:
                granules = set()
                for u in fp.units:
                    size = p.units[u].size
                    granules.update(range(offsets[u] // align,
                                          (offsets[u] + size - 1) // align + 1))
                windows = {w for gr in granules for w in range(gr - g + 1, gr + 1)}
                assert total == len(windows)


def test_evaluate_reports_violations_instead_of_raising() -> None:
    record = c_layout("s", [(f"f{i}", "long", 8, 8) for i in range(4)])
    entry = profile_entry(record, [(1, [access(record, 0, "f3")])])
    cons = LayoutConstraints(pins=("f0",))
    ev = evaluate_order(record, typed(entry), ["f3", "f0", "f1", "f2"], constraints=cons)
    assert any("pinned" in v for v in ev.violations)


def test_one_pass_total_equals_the_sum_over_starts() -> None:
    rng = random.Random(12)
    for _ in range(60):
        record, entry = random_case(rng, max_fields=8)
        align = rng.choice([1, 2, 4, 8, 16, 32, 64, 128])
        line = rng.choice([16, 32, 64])
        p = problem_of(record, entry, cache_line=line, object_align=align)
        order = p.movable[:]
        rng.shuffle(order)
        offsets = place_order(p, order).offsets
        for fp in p.lines_fp + p.dirty_fp:
            per_start = sum(footprint_lines(p, fp, offsets, s) for s in p.starts)
            assert footprint_lines_total(p, fp, offsets) == per_start
