"""Objects that always start at one offset inside a line, solved as cache-aligned ones.

When the profile recorded that every object of the type starts `s` bytes into a line
(issue 26: `calloc` puts zlib's `internal_state` at 48 mod 64), the placement model has
the one start `s`. Such an object is exactly a cache-aligned object preceded by `s`
bytes that nothing touches: `shifted_view` builds that problem (every offset, the fixed
area, the fixed spans of footprints, side boundaries and size limits moved by `s`), on
which every solver for cache-aligned objects runs (line models, the search over
declaration orders, the exact model). It is exact when `s` is a multiple of every unit's
alignment and of the record's: then C puts each unit `s` bytes further in the view than
in the object, for every order, so an order's lines (and the weighted totals, and every
bound) are the same in both. The caller places the chosen order in the real problem.
This module only builds the view.
"""

from __future__ import annotations

from dataclasses import replace

from cachefit.layout.problem import KindFootprints, LayoutProblem, SideRule, WeightedFootprint


def _shift_fps(fps: tuple[WeightedFootprint, ...], s: int) -> tuple[WeightedFootprint, ...]:
    return tuple(replace(fp, fixed=tuple((b + s, e + s) for b, e in fp.fixed)) for fp in fps)


def single_start(problem: LayoutProblem) -> int | None:
    """The one observed start offset when it is not 0 and the shift is exact, else None."""
    if len(problem.starts) != 1 or not problem.start_weights:
        return None
    s = problem.starts[0]
    if s == 0 or s % problem.record_align:
        return None
    aligns = [u.align for u in problem.units] + [u.natural_align for u in problem.units]
    if problem.fam is not None:
        aligns.append(max(1, min(problem.fam.align, problem.record_align)))
    if any(s % a for a in aligns):
        return None
    return s


def shifted_view(problem: LayoutProblem) -> tuple[LayoutProblem, int] | None:
    """The cache-aligned problem equivalent to `problem` and the shift `s`, or None when
    the problem does not have one exact non-zero start (`single_start`)."""
    s = single_start(problem)
    if s is None:
        return None
    fam = problem.fam
    view = replace(
        problem,
        record=replace(problem.record, size=problem.record.size + s),
        units=tuple(replace(u, offset=u.offset + s) for u in problem.units),
        fam=None if fam is None else replace(fam, offset=fam.offset + s),
        prefix_end=problem.prefix_end + s,
        object_align=problem.line, starts=(0,), start_weights=(),
        size_limit=problem.size_limit + s,
        size_min=problem.size_min + s if problem.size_min else 0,
        sides=tuple(r if r.offset is None else SideRule(r.unit, r.before, r.marker, r.offset + s)
                    for r in problem.sides),
        lines_fp=_shift_fps(problem.lines_fp, s),
        dirty_fp=_shift_fps(problem.dirty_fp, s),
        report_lines_fp=_shift_fps(problem.report_lines_fp, s),
        report_dirty_fp=_shift_fps(problem.report_dirty_fp, s),
        kinds=tuple(KindFootprints(k.entry, k.count, _shift_fps(k.lines_fp, s),
                                   _shift_fps(k.dirty_fp, s)) for k in problem.kinds))
    return view, s
