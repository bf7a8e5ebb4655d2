"""Everything the report shows about one profiled type, computed once for both renderers.

`build_type_report` takes the type's profile entry, the record's layout (see
record_lookup), and where the new order comes from: a layout plan's order, or the layout
optimizer (run here, with a time limit). The new layout's offsets are the compiler's when
the caller passes the record read from an optimized binary (`after_record`), otherwise the
C placement model's prediction, and the views say which. Figures per invocation come from
`cachefit.layout` (the same numbers `cachefit reorder` prints), in total and per kind of
operation (entry function: `KindLines`), expected over where the objects start: where the
profile saw them when it recorded that (issue 26), and then `AlignmentAdvice` says what
line-aligned objects (aligned_alloc, alignas) would give; per-sequence figures count
lines with the object at a line start. A type with sharing data (issue 30) gets its
`SharingSection` (report.sharing_report); a new layout with padding (a plan's, the
optimizer's, a compiled one's padding members) is placed with it. This module prints
nothing and writes no files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cachefit.errors import UserError
from cachefit.layout import evaluate_order, optimize_layout
from cachefit.layout.result import KindFigures
from cachefit.model import Record
from cachefit.model.padding_members import declared_members
from cachefit.model.profile import AccessSequence, TypeProfile
from cachefit.model.project_config import SHARING_WEIGHT
from cachefit.report.layout_figures import measure_record
from cachefit.report.layout_view import LayoutView, make_view, sequence_lines
from cachefit.report.record_lookup import FoundRecord
from cachefit.report.sharing_report import (
    SharingSection,
    compiled_padding,
    padded_layout,
    sharing_section,
)


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
class AlignmentAdvice:
    """Where the profile saw the objects start (`observed`: offset in a line -> objects
    touched there, counted per invocation) and the lines per invocation with line-aligned
    objects instead: the old layout's (`aligned_before`) and the best layout's for them
    (`aligned_after`: the optimizer's for that alignment, or the given new layout's,
    `aligned_after_source`). `saving` is the main figures' lines after minus
    `aligned_after` (> 0: aligning the objects saves that many lines per invocation)."""

    observed: dict[int, int]
    aligned_before: float
    aligned_after: float
    aligned_after_source: str
    saving: float


SAVING_EPSILON = 1e-9
"""Savings of lines per invocation below this are none (float noise)."""


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
    start_distribution: dict[int, int] = field(default_factory=dict)
    """The observed start offsets the figures are for (offset -> weight); empty in the
    uniform model (`object_align`, `start_offsets`)."""
    alignment: AlignmentAdvice | None = None
    """Set when the figures are for observed starts that are not all at a line start."""
    sharing: SharingSection | None = None
    """What threads share (issue 30); None when the profile has no sharing data."""

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
    plan_padding: Mapping[str, int] = field(default_factory=dict)
    """The plan's padding before fields (issue 30)."""


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
                      entry_weights: Mapping[str, float] | None = None,
                      sharing_weight: float = SHARING_WEIGHT) -> TypeReport:
    """Compute the figures and both layouts of one type (`entry_weights`: the kinds'
    weights in the totals and the optimizer's objective; `sharing_weight`: the weight of
    line transfers between threads in it, docs/layout.md)."""
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
    order: tuple[str, ...] = tuple(f.name for f in record.fields)
    padding: dict[str, int] = {}
    gains: dict[str, float] | None = None      # the optimizer's, for its padding
    lines_after = dirty_after = 0.0
    if choice.plan_order is None and after_record is not None:
        source = f"the order compiled into {after_record.origin.removeprefix('DWARF of ')}"
    elif choice.plan_order is not None:
        _check_order(record, choice.plan_order, choice.plan_path)
        order, padding = choice.plan_order, dict(choice.plan_padding)
        if padding:
            ev = padded_layout(record, tp, order, padding, cache_line=cache_line,
                               object_align=object_align, entry_weights=entry_weights)
        else:
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
                              entry_weights=entry_weights, sharing_weight=sharing_weight)
        kinds_after = res.kinds_after
        quality = "proven optimal" if res.optimal else f"gap to the bound {100 * res.gap:.1f} %"
        method = res.method.removesuffix(" (optimal)")
        source = (f"the order the optimizer computes from the profile ({method}; "
                  f"{quality}; time limit {choice.time_limit:g} s; no source constraints)")
        offsets, size = dict(res.offsets), res.size_after
        order, padding, gains = tuple(res.order), dict(res.padding), res.padding_gains
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
        if choice.plan_order is not None and \
                declared != declared_members(choice.plan_order, choice.plan_padding):
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
        order, padding = compiled_padding(arec)
        offsets, size = {f.name: f.offset for f in arec.fields}, arec.size
        after_view = make_view("after", tp, {f.name: f.offset for f in arec.fields},
                               arec.size, f"compiler: {after_record.origin}",
                               not after_record.from_compiler)
    else:
        after_view = make_view("after", tp, offsets, size,
                               "predicted: the C placement model with the record's sizes "
                               "and alignments", True)
    counted = tp.counted
    tp.sort()
    figures = zip(sequence_lines(tp, before_view, cache_line),
                  sequence_lines(tp, after_view, cache_line),
                  sequence_lines(tp, before_view, cache_line, written_only=True),
                  sequence_lines(tp, after_view, cache_line, written_only=True), strict=True)
    seqs = tuple(
        SequenceLines(
            rank=i + 1, sequence=s, share=s.count / counted if counted else 0.0,
            lines_before=lb, lines_after=la, dirty_before=db, dirty_after=da)
        for i, (s, (lb, la, db, da)) in enumerate(zip(tp.sequences, figures, strict=True)))
    advice = None
    if before.start_distribution and set(before.start_distribution) != {0}:
        advice = _alignment_advice(tp, found, after_record, choice, lines_after,
                                   res_lines=lines_after if choice.plan_order is None
                                   and after_record is None else None,
                                   cache_line=cache_line, entry_weights=entry_weights,
                                   sharing_weight=sharing_weight)
    return TypeReport(
        name=tp.name, profile=tp, cache_line=cache_line, record_origin=found.origin,
        before=before_view, after=after_view, after_source=source,
        lines_before=before.lines, lines_after=lines_after, lines_lower_bound=lines_lb,
        dirty_before=before.dirty, dirty_after=dirty_after, dirty_lower_bound=dirty_lb,
        object_align=before.object_align, start_offsets=before.start_offsets,
        sequences=seqs, warnings=tuple(dict.fromkeys(warnings)),
        kinds=_kind_lines(before.kinds, kinds_after),
        start_distribution=before.start_distribution, alignment=advice,
        sharing=sharing_section(tp, record, offsets, size, order, padding,
                                cache_line=cache_line, object_align=object_align,
                                entry_weights=entry_weights, gains=gains))


def _alignment_advice(tp: TypeProfile, found: FoundRecord, after_record: FoundRecord | None,
                      choice: AfterChoice, lines_after: float, *,
                      res_lines: float | None, cache_line: int,
                      entry_weights: Mapping[str, float] | None,
                      sharing_weight: float) -> AlignmentAdvice:
    """The lines per invocation with objects aligned to the line (`object_align` =
    `cache_line`), for the old layout and for the new one: the optimizer's best layout for
    aligned objects when the report ran the optimizer (`res_lines` set; only when the
    bound for aligned objects is below `lines_after`, else nothing can be saved), else
    the given new layout (plan order or compiled record) measured at a line start."""
    observed: dict[int, int] = {}
    for mod, n in (tp.alignment or {}).items():
        observed[mod % cache_line] = observed.get(mod % cache_line, 0) + n
    aligned = measure_record(found.record, tp, cache_line=cache_line, object_align=cache_line,
                             entry_weights=entry_weights)
    if after_record is not None:
        after = measure_record(after_record.record, tp, cache_line=cache_line,
                               object_align=cache_line, entry_weights=entry_weights).lines
        source = "the compiled new layout"
    elif choice.plan_order is not None:
        after = padded_layout(found.record, tp, choice.plan_order, choice.plan_padding,
                              cache_line=cache_line, object_align=cache_line,
                              entry_weights=entry_weights).lines
        source = "the plan's layout"
    elif res_lines is not None and aligned.lines_lower_bound < res_lines - SAVING_EPSILON:
        res = optimize_layout(found.record, tp, cache_line=cache_line, object_align=cache_line,
                              time_limit=choice.time_limit, entry_weights=entry_weights,
                              sharing_weight=sharing_weight)
        after = res.lines_after
        source = "the optimizer's layout for line-aligned objects"
    else:
        after = aligned.lines_lower_bound
        source = "the lower bound for them"
    return AlignmentAdvice(dict(sorted(observed.items())), aligned.lines, after, source,
                           lines_after - after)
