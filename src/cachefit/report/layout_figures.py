"""Line figures of a record exactly as laid out (its own offsets), with the optimizer's model.

`measure_record` asks `cachefit.layout` for the cache lines and dirty lines per invocation
of a record at the offsets it holds (the compiler's, when the record came from DWARF), and
for the per-footprint lower bounds that hold for any order. It uses the layout package's
cost functions so the report's figures are the same numbers `cachefit reorder` prints; it
chooses no layout and prints nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.line_cost import (
    cost_totals,
    kind_figures,
    line_figures,
    per_invocation,
    simple_bound,
)
from cachefit.layout.placement import original_placement
from cachefit.layout.problem import build_problem
from cachefit.layout.result import KindFigures
from cachefit.model import Record
from cachefit.model.profile import TypeProfile


@dataclass(frozen=True)
class MeasuredLayout:
    """Per invocation, expected over the placement model's object start offsets (the
    observed ones, with their weights, when the profile recorded them: issue 26)."""

    lines: float
    dirty: float
    lines_lower_bound: float
    dirty_lower_bound: float
    object_align: int
    start_offsets: int
    warnings: tuple[str, ...]
    kinds: tuple[KindFigures, ...] = ()
    """The same per kind of operation (count-weighted within the kind)."""
    start_distribution: dict[int, int] = field(default_factory=dict)
    """Observed start offset -> weight; empty in the uniform model."""


def measure_record(record: Record, profile_type: TypeProfile, *, cache_line: int,
                   object_align: int | None,
                   entry_weights: Mapping[str, float] | None = None) -> MeasuredLayout:
    """Lines and dirty lines of `record` at its own offsets, and the per-footprint bounds."""
    p = build_problem(record, profile_type, cache_line=cache_line, object_align=object_align,
                      relax_align=False, constraints=LayoutConstraints(),
                      allow_growth=True, merge=False, entry_weights=entry_weights)
    offsets = original_placement(p).offsets
    figures = line_figures(p, cost_totals(p, offsets, p.report_lines_fp, p.report_dirty_fp))
    return MeasuredLayout(
        lines=figures.lines, dirty=figures.dirty,
        lines_lower_bound=per_invocation(p, simple_bound(p, p.report_lines_fp)),
        dirty_lower_bound=per_invocation(p, simple_bound(p, p.report_dirty_fp)),
        object_align=p.object_align, start_offsets=len(p.starts), warnings=p.warnings,
        kinds=kind_figures(p, offsets),
        start_distribution=dict(zip(p.starts, p.start_weights, strict=True))
        if p.start_weights else {})
