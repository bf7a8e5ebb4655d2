"""Reorder a record in its source file: choose the order, rewrite, verify, make headers.

Given an `Analysis` (cachefit.reorder.analysis) and the options of `cachefit reorder`, this
refuses when the analysis says so, takes the order from `--order` or from the optimizer
(with the analysis's constraints), rewrites the member list (member_order) and, with
`--fix-initializers`, the record's initialisers (initializers), then re-parses the result:
the compiler's layout must be the predicted one (layout_check) and every unit must still
compile. Only then does it return the new file contents and the generated headers; it
writes nothing itself (the CLI does, atomically).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from cachefit.edits import Edit, EditList
from cachefit.errors import UnsafeTransformation, UserError
from cachefit.frontend.ctor_init_lists import reorder_list
from cachefit.layout import LayoutEvaluation, LayoutResult, evaluate_order, optimize_layout
from cachefit.layout.problem import flexible_array
from cachefit.model import Record
from cachefit.model.profile import TypeProfile
from cachefit.reorder.analysis import Analysis, refuse_if_needed
from cachefit.reorder.constraints import (
    OrderConstraint,
    layout_violation,
    to_layout_constraints,
)
from cachefit.rewrite.initializers import fix_site, is_cxx20
from cachefit.rewrite.layout_check import Expectation, check_layout, reparse_record
from cachefit.rewrite.layout_headers import assert_header, offsets_header
from cachefit.rewrite.member_order import plan_pieces, rewrite_members
from cachefit.rewrite.order_choice import empty_profile_entry, parse_order, profile_entry
from cachefit.rewrite.units_compile import check_units_compile


@dataclass
class ReorderOptions:
    """The choices of `cachefit reorder` that shape the result."""

    order: str | None = None
    profile: str | None = None
    cache_line: int | None = None
    object_align: int | None = None
    relax_align: bool = False
    pins: list[str] = field(default_factory=list)
    fix_initializers: bool = False
    allow_growth: bool = False
    time_limit: float = 10.0
    merge: bool = False
    offsets_header: str | None = None
    assert_header: str | None = None


@dataclass
class ReorderOutcome:
    """What a reordering produced (nothing is written yet)."""

    analysis: Analysis
    old_order: list[str]
    new_order: list[str]
    before: Record
    after: Record
    originals: dict[str, bytes]
    contents: dict[str, bytes]
    headers: dict[str, str]
    constraints: list[OrderConstraint]
    result: LayoutResult | None = None
    eval_before: LayoutEvaluation | None = None
    eval_after: LayoutEvaluation | None = None
    split: tuple[str, ...] = ()
    initializers_fixed: int = 0
    warnings: list[str] = field(default_factory=list)
    # Files changed only to keep constructor initialiser lists in declaration order.
    cosmetic_files: list[str] = field(default_factory=list)
    # Zero-width bit-fields declared before these fields (field -> type), see docs/layout.md.
    bitfield_barriers: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        r, eb, ea = self.result, self.eval_before, self.eval_after
        if r is not None:
            lines = {"before": r.lines_before, "after": r.lines_after,
                     "lower_bound": r.lines_lower_bound}
            dirty = {"before": r.dirty_before, "after": r.dirty_after}
        elif eb is not None and ea is not None:
            lines = {"before": eb.lines, "after": ea.lines, "lower_bound": None}
            dirty = {"before": eb.dirty, "after": ea.dirty}
        else:
            lines = {"before": None, "after": None, "lower_bound": None}
            dirty = {"before": None, "after": None}
        return {
            "type": self.before.name,
            "file": self.analysis.file,
            "old_order": self.old_order,
            "new_order": self.new_order,
            "lines": lines,
            "dirty_lines": dirty,
            "size": {"before": self.before.size, "after": self.after.size},
            "optimal": r.optimal if r is not None else None,
            "solver_seconds": r.solver_seconds if r is not None else 0.0,
            "method": r.method if r is not None else "given order",
            "constraints": [c.to_json() for c in self.constraints],
            "merged": [asdict(m) for m in r.merged] if r is not None else [],
            "relaxed_alignment": dict(r.relaxed_alignment) if r is not None else {},
            "split_declarations": list(self.split),
            "initializers_fixed": self.initializers_fixed,
            "changed_files": sorted(f for f in self.contents
                                    if self.contents[f] != self.originals.get(f)),
            "headers": sorted(self.headers),
            "offsets": {f.name: f.offset for f in self.after.fields},
            "bitfield_barriers": dict(self.bitfield_barriers),
            "gap": r.gap if r is not None else None,
            "warnings": self.warnings,
        }


def _pin_constraints(a: Analysis, pins: list[str]) -> list[OrderConstraint]:
    names = {f.name for f in a.record.fields}
    for p in pins:
        if p not in names:
            raise UserError(f"--pin {p}: {a.record.name} has no field {p}",
                            "fields: " + ", ".join(f.name for f in a.record.fields))
    return [OrderConstraint("pin", (p,), "--pin", None) for p in pins]


def violations(constraints: list[OrderConstraint], old: list[str],
                new: list[str]) -> list[OrderConstraint]:
    return [c for c in constraints if c.violated_by(old, new)]


def dropped_warning(name: str, entry: TypeProfile) -> list[str]:
    """Say how many invocations the profile left out of the figures (runaway sequences):
    zstd's seqStore_t had all 66 cut off, and the figures read 0.00 -> 0.00 lines."""
    runaway = entry.runaway
    if not runaway:
        return []
    counted = entry.counted
    return [f"{runaway} of {runaway + counted} invocations that touched {name} were cut off "
            "as runaway (a sequence longer than max_accesses, or more objects than "
            "max_objects) and are not in these figures; if a [trace] entry function "
            "encloses the whole run, choose entries that are one operation, else raise "
            "[trace] max_accesses or max_objects (docs/cachefit-toml.md)"]


def refuse_order(a: Analysis, bad: list[OrderConstraint], what: str) -> UnsafeTransformation:
    c = bad[0]
    more = len(bad) - 1
    also = f" (and {more} more constraint{'s' if more > 1 else ''} it breaks)" if more else ""
    return UnsafeTransformation(f"{what} breaks an order constraint: {c.describe()}{also}",
                                "choose an order that honours the constraints, or use "
                                "--profile without --order to let the optimizer honour them "
                                "(its summary and --json list them all)",
                                c.location or (a.body.units[0].location if a.body.units
                                               else None))


def _relaxed_attributes(result: LayoutResult | None) -> dict[str, str]:
    if result is None:
        return {}
    return {n: f"__attribute__((packed, aligned({al})))"
            for n, al in result.relaxed_alignment.items()}


def _adjusted_warning(rec: Record, requested: list[str], placed: list[str]) -> str:
    """Why the placement model changed the given order: a flexible array member stays last;
    fields sharing a storage unit (bit-fields and what the compiler packs into their unit)
    move as a whole."""
    fam = flexible_array(rec)
    rest = [[n for n in order if fam is None or n != fam.name] for order in (requested, placed)]
    why = ([f"the flexible array member {fam.name} stays last"]
           if fam is not None and requested[-1] != fam.name else [])
    why += ["fields sharing a bit-field storage unit stay together"] if rest[0] != rest[1] \
        else []
    if not why:
        return f"the order was adjusted by the placement model: {', '.join(placed)}"
    return f"the order was adjusted so that {' and '.join(why)}: {', '.join(placed)}"


def reorder_source(a: Analysis, opts: ReorderOptions,
                   stage: Callable[[str], None] | None = None) -> ReorderOutcome:
    """Rewrite the record of `a` in its file as `opts` ask (see the module doc). `stage` is
    told the stage starting ("optimizing", "rewriting", ...), for a display."""
    say = stage or (lambda _what: None)
    constraints = a.constraints + _pin_constraints(a, opts.pins)
    a.constraints = constraints
    refuse_if_needed(a, opts.fix_initializers)
    rec, body = a.record, a.body
    old = [f.name for f in rec.fields]
    lc = to_layout_constraints(constraints)
    result: LayoutResult | None = None
    eval_before = eval_after = None
    warnings: list[str] = list(a.warnings)
    walls: dict[str, str] = {}     # zero-width bit-field barriers the new order needs
    if opts.order is not None:
        say("checking the given order")
        requested = parse_order(opts.order, body)
        plan_pieces(body, requested)          # names every field once, units together
        bad = violations(constraints, old, requested)
        if bad:
            raise refuse_order(a, bad, "the given order")
        if opts.profile:
            entry, line = profile_entry(opts.profile, rec, a.type_name)
        else:
            entry, line = empty_profile_entry(rec), 64
        kw = dict(cache_line=opts.cache_line or line, object_align=opts.object_align,
                  constraints=lc, allow_growth=True,
                  entry_weights=a.config.entry_weights or None)
        before_ev = evaluate_order(rec, entry, old, **kw)  # type: ignore[arg-type]
        after_ev = evaluate_order(rec, entry, requested, **kw)  # type: ignore[arg-type]
        if list(after_ev.order) != requested:
            warnings.append(_adjusted_warning(rec, requested, list(after_ev.order)))
            requested = list(after_ev.order)
            plan_pieces(body, requested)
        predicted_size, predicted = after_ev.size, after_ev.offsets
        walls = dict(after_ev.bitfield_barriers)
        warnings += list(after_ev.violations)
        if opts.profile:
            eval_before, eval_after = before_ev, after_ev
    elif opts.profile:
        entry, line = profile_entry(opts.profile, rec, a.type_name)
        say("optimizing")
        result = optimize_layout(rec, entry, cache_line=opts.cache_line or line,
                                 object_align=opts.object_align, relax_align=opts.relax_align,
                                 constraints=lc, allow_growth=opts.allow_growth,
                                 time_limit=opts.time_limit, merge=opts.merge,
                                 entry_weights=a.config.entry_weights or None)
        requested = list(result.order)
        bad = violations(constraints, old, requested)
        if bad:
            raise refuse_order(a, bad, "the optimizer's order")
        predicted_size, predicted = result.size_after, result.offsets
        walls = dict(result.bitfield_barriers)
        warnings += list(result.warnings)
        warnings += dropped_warning(rec.name, entry)
    else:
        raise UserError("no order to apply", "give --profile FILE, or --order a,b,c "
                        "(or --order alphabetical)")

    broken = layout_violation(constraints, rec, predicted, predicted_size)  # asserts
    if broken is not None:
        raise broken
    say("rewriting")
    attrs = _relaxed_attributes(result)
    mr = rewrite_members(body, requested, attrs, walls)
    edits = EditList()
    for b, e, piece in mr.edits:
        edits.add(Edit(body.file, b, e, piece.decode("utf-8", errors="surrogateescape"),
                       "member order"))
    originals: dict[str, bytes] = {body.file: body.text}

    def read(path: str) -> bytes:
        if path not in originals:
            with open(path, "rb") as fh:
                originals[path] = fh.read()
        return originals[path]

    fixed = 0
    if opts.fix_initializers:
        cxx20 = any(is_cxx20(args) for _, args in a.units)
        for site in a.init_sites:
            edits.extend(fix_site(site, list(mr.effective_order), read, cxx20))
            fixed += 1
    cosmetic: set[str] = set()
    semantic = set(edits.files())
    for lst in a.ctor_lists:
        more = reorder_list(lst, mr.effective_order, read(lst.file))
        edits.extend(more)
        cosmetic |= {e.file for e in more}
    for f in edits.files():
        read(f)
    contents = edits.apply(originals) if len(edits) else {}

    path, args = a.unit
    after = reparse_record(path, args, a.type_name, contents,
                           body.units[0].location if body.units else None)
    broken = layout_violation(constraints, rec, {f.name: f.offset for f in after.fields},
                              after.size)
    if broken is not None:
        raise broken
    pins = {n: next(f.offset for f in rec.fields if f.name == n)
            for c in constraints if c.kind == "pin" for n in c.fields}
    expect = Expectation(order=mr.effective_order, size=predicted_size,
                         offsets=predicted if tuple(requested) == mr.effective_order else None,
                         pins=pins, relaxed=dict(result.relaxed_alignment) if result else None)
    check_layout(rec, after, expect, body.units[0].location if body.units else None)
    _check_byte_boundaries(rec, after, constraints)
    n = len(a.units)
    say(f"compile check of {n} unit{'' if n == 1 else 's'}")
    _check_units_compile(a, contents)
    headers: dict[str, str] = {}
    if opts.offsets_header:
        headers[opts.offsets_header] = offsets_header(after, a.type_name)
    if opts.assert_header:
        headers[opts.assert_header] = assert_header(after, a.type_spelling, a.cxx)
    return ReorderOutcome(a, old, list(mr.effective_order), rec, after, originals, contents,
                          headers, constraints, result, eval_before, eval_after, mr.split,
                          fixed, warnings, sorted(cosmetic - semantic), walls)


def _check_byte_boundaries(before: Record, after: Record,
                           constraints: list[OrderConstraint]) -> None:
    old = {f.name: f for f in before.fields}
    new = {f.name: f for f in after.fields}
    for c in constraints:
        if c.kind != "same_side" or not isinstance(c.boundary, int):
            continue
        b = c.boundary
        for n in c.fields or tuple(old):
            was, now = old[n], new[n]
            if (was.end <= b) != (now.end <= b) or (was.offset >= b) != (now.offset >= b):
                raise UnsafeTransformation(
                    f"{n} moved across byte {b}, which code relies on ({c.reason})",
                    "nothing was written; keep the members of that range in place",
                    c.location)


def _check_units_compile(a: Analysis, contents: dict[str, bytes]) -> None:
    """Every unit must still compile with the new text (the defining one was re-parsed)."""
    check_units_compile(a.units, a.unit, contents, a.unit_files, a.scan_options.jobs,
                        a.scan_options.open_cache())
