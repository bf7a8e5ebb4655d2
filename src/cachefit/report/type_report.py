"""Everything the report shows about one profiled type, computed once for both renderers.

`build_type_report` takes the type's profile entry, the record's layout (see
record_lookup), and where the new order comes from: a layout plan's order, or the layout
optimizer (run here, with a time limit). The new layout's offsets are the compiler's when
the caller passes the record read from an optimized binary (`after_record`), otherwise the
C placement model's prediction, and the views say which. Figures per invocation come from
`cachefit.layout` (the same numbers `cachefit reorder` prints), in total and per kind of
operation (entry function: `KindLines`); per-sequence figures count lines with the object
at a line start. This module prints nothing and writes no files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cachefit.errors import UserError
from cachefit.layout import evaluate_order, optimize_layout
from cachefit.layout.result import KindFigures
from cachefit.model import Record
from cachefit.report.layout_figures import measure_record
from cachefit.report.layout_view import LayoutView, make_view, touched_lines
from cachefit.report.record_lookup import FoundRecord
from cachefit.trace.profile_format import AccessSequence, TypeProfile


@dataclass(frozen=True)
class SequenceLines:
    """One sequence and its lines with the object at a line start, before and after."""

    rank: int
    sequence: AccessSequence
    share: float
    lines_before: int
    lines_after: int
    dirty_before: int
    dirty_after: int


@dataclass(frozen=True)
class KindLines:
    """One kind of operation: its invocations (that touched the type), lines and dirty
    lines per invocation of that kind before and after, and the per-footprint lower
    bounds (valid for any order)."""

    entry: str | None
    invocations: int
    lines_before: float
    lines_after: float
    lines_lower_bound: float
    dirty_before: float
    dirty_after: float
    dirty_lower_bound: float


def _kind_lines(before: tuple[KindFigures, ...],
                after: tuple[KindFigures, ...]) -> tuple[KindLines, ...]:
    later = {k.entry: k for k in after}
    out = []
    for b in before:
        a = later.get(b.entry, b)
        out.append(KindLines(b.entry, b.invocations, b.lines, a.lines, b.lines_lower_bound,
                             b.dirty, a.dirty, b.dirty_lower_bound))
    return tuple(out)


@dataclass(frozen=True)
class TypeReport:
    """The report of one type. Line figures are per invocation (see module docstring)."""

    name: str
    profile: TypeProfile
    cache_line: int
    record_origin: str
    before: LayoutView
    after: LayoutView
    after_source: str
    lines_before: float
    lines_after: float
    lines_lower_bound: float
    dirty_before: float
    dirty_after: float
    dirty_lower_bound: float
    object_align: int
    start_offsets: int
    sequences: tuple[SequenceLines, ...]
    warnings: tuple[str, ...]
    kinds: tuple[KindLines, ...] = ()
    """Per kind of operation, heaviest first (one kind, entry None, for a profile
    without kinds)."""

    @property
    def has_kinds(self) -> bool:
        """Whether the type was touched by several kinds of operation (then the report
        shows them separately; with one kind the totals are its figures)."""
        return len(self.kinds) > 1


@dataclass(frozen=True)
class SkippedType:
    """A type the report could not analyse (no usable layout, virtual bases, ...)."""

    name: str
    reason: str


@dataclass(frozen=True)
class AfterChoice:
    """Where the new order comes from: a plan's order (with its path), else the optimizer."""

    plan_order: tuple[str, ...] | None = None
    plan_path: str = ""
    plan_size: int | None = None
    time_limit: float = 5.0


def _check_order(record: Record, order: tuple[str, ...], plan_path: str) -> None:
    names = [f.name for f in record.fields]
    missing = [n for n in names if n not in order]
    unknown = [n for n in order if n not in names]
    if missing or unknown:
        what = (f"lacks field {missing[0]}" if missing else f"names {unknown[0]}, which "
                f"{record.name} does not have")
        raise UserError(f"the layout plan's order for {record.name} {what}",
                        "regenerate the plan from the same sources the profile was traced "
                        f"from ({plan_path})")


def build_type_report(tp: TypeProfile, found: FoundRecord, *,
                      cache_line: int, object_align: int | None, choice: AfterChoice,
                      after_record: FoundRecord | None = None,
                      entry_weights: Mapping[str, float] | None = None) -> TypeReport:
    """Compute the figures and both layouts of one type (`entry_weights`: the kinds'
    weights in the totals and the optimizer's objective, docs/layout.md)."""
    record = found.record
    warnings: list[str] = []
    traced = {f.name: f.offset for f in tp.fields}
    differ = [(f.name, f.offset) for f in record.fields
              if traced.get(f.name, f.offset) != f.offset]
    if differ:
        name, at = differ[0]
        warnings.append(f"the layout from {found.origin} is not the traced one ({name} is at "
                        f"{at}, traced at {traced[name]}); 'before' shows that layout")
    before = measure_record(record, tp, cache_line=cache_line, object_align=object_align,
                            entry_weights=entry_weights)
    kinds_after = before.kinds
    warnings += before.warnings
    lines_lb, dirty_lb = before.lines_lower_bound, before.dirty_lower_bound
    offsets: dict[str, int] = {}
    size = record.size
    lines_after = dirty_after = 0.0
    if choice.plan_order is None and after_record is not None:
        source = f"the order compiled into {after_record.origin.removeprefix('DWARF of ')}"
    elif choice.plan_order is not None:
        _check_order(record, choice.plan_order, choice.plan_path)
        ev = evaluate_order(record, tp, choice.plan_order, cache_line=cache_line,
                            object_align=object_align, allow_growth=True,
                            entry_weights=entry_weights)
        kinds_after = ev.kinds
        source = f"the order in the layout plan {choice.plan_path}"
        offsets, size = dict(ev.offsets), ev.size
        lines_after, dirty_after = ev.lines, ev.dirty
        if choice.plan_size is not None and choice.plan_size != ev.size:
            warnings.append(f"the plan expects sizeof {choice.plan_size}, the placement "
                            f"model predicts {ev.size}")
    else:
        res = optimize_layout(record, tp, cache_line=cache_line,
                              object_align=object_align, time_limit=choice.time_limit,
                              entry_weights=entry_weights)
        kinds_after = res.kinds_after
        quality = "proven optimal" if res.optimal else f"gap to the bound {100 * res.gap:.1f} %"
        method = res.method.removesuffix(" (optimal)")
        source = (f"the order the optimizer computes from the profile ({method}; "
                  f"{quality}; time limit {choice.time_limit:g} s; no source constraints)")
        offsets, size = dict(res.offsets), res.size_after
        lines_after, dirty_after = res.lines_after, res.dirty_after
        lines_lb = max(lines_lb, res.lines_lower_bound)
        dirty_lb = max(dirty_lb, res.dirty_lower_bound)
        warnings += [w for w in res.warnings if w not in warnings]
    before_view = make_view(
        "before", tp, {f.name: f.offset for f in record.fields}, record.size,
        f"{'compiler' if found.from_compiler else 'predicted'}: {found.origin}",
        not found.from_compiler)
    if after_record is not None:
        arec = after_record.record
        declared = tuple(f.name for f in arec.fields)
        if choice.plan_order is not None and declared != choice.plan_order:
            warnings.append(f"the optimized binary declares {tp.name} in another order than "
                            "the plan")
        compiled = {f.name: f.offset for f in arec.fields}
        moved = sorted(n for n, off in offsets.items() if compiled.get(n, off) != off)
        if moved:
            warnings.append(f"the compiled layout differs from the prediction: {moved[0]} "
                            f"is at {compiled[moved[0]]}, predicted {offsets[moved[0]]} "
                            f"({len(moved)} fields differ)")
        measured = measure_record(arec, tp, cache_line=cache_line,
                                  object_align=object_align, entry_weights=entry_weights)
        lines_after, dirty_after = measured.lines, measured.dirty
        kinds_after = measured.kinds
        after_view = make_view("after", tp, {f.name: f.offset for f in arec.fields},
                               arec.size, f"compiler: {after_record.origin}",
                               not after_record.from_compiler)
    else:
        after_view = make_view("after", tp, offsets, size,
                               "predicted: the C placement model with the record's sizes "
                               "and alignments", True)
    counted = tp.counted
    tp.sort()
    seqs = tuple(
        SequenceLines(
            rank=i + 1, sequence=s, share=s.count / counted if counted else 0.0,
            lines_before=touched_lines(tp, before_view, s.accesses, cache_line),
            lines_after=touched_lines(tp, after_view, s.accesses, cache_line),
            dirty_before=touched_lines(tp, before_view, s.accesses, cache_line,
                                       written_only=True),
            dirty_after=touched_lines(tp, after_view, s.accesses, cache_line,
                                      written_only=True))
        for i, s in enumerate(tp.sequences))
    return TypeReport(
        name=tp.name, profile=tp, cache_line=cache_line, record_origin=found.origin,
        before=before_view, after=after_view, after_source=source,
        lines_before=before.lines, lines_after=lines_after, lines_lower_bound=lines_lb,
        dirty_before=before.dirty, dirty_after=dirty_after, dirty_lower_bound=dirty_lb,
        object_align=before.object_align, start_offsets=before.start_offsets,
        sequences=seqs, warnings=tuple(dict.fromkeys(warnings)),
        kinds=_kind_lines(before.kinds, kinds_after))
