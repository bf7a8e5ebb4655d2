"""The layer that decides: which member order a record gets, and its predicted figures.

`decide(analysis, options, profile)` turns an `Analysis` (what the code base needs from
the order) and a loaded profile into an `OrderDecision`: refusals are raised, `--pin`
fields join the constraints, the order comes from `--order` (checked against the
constraints and the placement model) or from the optimizer on the profile's entry for
the record, and the predicted layout must keep what the code relies on (pins, asserted
sizes). `check_order(analysis, order)` decides for an order that a layout plan already
holds (build-time mode, one preprocessed unit): the same refusals and constraints, and
the zero-width bit-field barriers the placement model asks for.

It reads no files (the caller loads the profile), edits no text (cachefit.rewrite
applies a decision) and prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cachefit.errors import Location, UnsafeTransformation, UserError
from cachefit.layout import LayoutEvaluation, LayoutResult, evaluate_order, optimize_layout
from cachefit.layout.problem import flexible_array
from cachefit.model import Record
from cachefit.model.profile import Profile, TypeProfile
from cachefit.reorder.analysis import Analysis, refuse_if_needed
from cachefit.reorder.constraints import (
    OrderConstraint,
    layout_violation,
    to_layout_constraints,
)
from cachefit.reorder.member_pieces import declared_order, plan_pieces, split_declarations
from cachefit.reorder.order_choice import empty_profile_entry, parse_order, profile_entry


@dataclass(frozen=True)
class DecideOptions:
    """The choices that shape a decision (`cachefit reorder`'s, or the build's)."""

    order: str | None = None            # `--order`: a,b,c or 'alphabetical'
    cache_line: int | None = None       # default: the profile's, else 64
    object_align: int | None = None
    relax_align: bool = False
    pins: tuple[str, ...] = ()
    fix_initializers: bool = False
    allow_growth: bool = False
    time_limit: float = 10.0
    merge: bool = False


@dataclass
class OrderDecision:
    """The order chosen for one record and what it is predicted to give."""

    analysis: Analysis
    old_order: list[str]
    order: list[str]                    # the order to declare
    constraints: list[OrderConstraint]
    size: int | None = None             # predicted sizeof (None: not predicted)
    offsets: dict[str, int] | None = None   # predicted offsets (None: not predicted)
    result: LayoutResult | None = None
    eval_before: LayoutEvaluation | None = None
    eval_after: LayoutEvaluation | None = None
    # Zero-width bit-fields to declare before these fields (field -> type), docs/layout.md.
    barriers: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Bytes of padding to declare right before these fields (issue 30: the layout's
    # sharing term, docs/layout.md "Threads"); counted in `size`.
    padding: dict[str, int] = field(default_factory=dict)

    @property
    def record(self) -> Record:
        return self.analysis.record

    @property
    def attributes(self) -> dict[str, str]:
        """Attributes to add to fields whose alignment the optimizer relaxed."""
        if self.result is None:
            return {}
        return {n: f"__attribute__((packed, aligned({al})))"
                for n, al in self.result.relaxed_alignment.items()}

    @property
    def relaxed(self) -> dict[str, int] | None:
        return dict(self.result.relaxed_alignment) if self.result is not None else None

    @property
    def pins(self) -> dict[str, int]:
        """The fields that must keep their offsets, with those offsets."""
        return {n: next(f.offset for f in self.record.fields if f.name == n)
                for c in self.constraints if c.kind == "pin" for n in c.fields}

    @property
    def split(self) -> tuple[str, ...]:
        """The first field of each declaration the order splits."""
        body = self.analysis.body
        return split_declarations(body, plan_pieces(body, self.order))

    @property
    def declared(self) -> tuple[str, ...]:
        """The field names as the member list declares them under this order."""
        return declared_order(plan_pieces(self.analysis.body, self.order))

    @property
    def changes_text(self) -> bool:
        """Whether applying the decision changes the member list."""
        body = self.analysis.body
        pieces = plan_pieces(body, self.order)
        same = [p.unit for p in pieces] == body.units and all(p.whole for p in pieces)
        return not same or bool(self.attributes) or bool(self.barriers) or \
            bool(self.padding)

    def figures_json(self) -> dict[str, Any]:
        """The decision's part of `cachefit reorder --json` (docs/reorder.md)."""
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
            "lines": lines,
            "dirty_lines": dirty,
            "optimal": r.optimal if r is not None else None,
            "solver_seconds": r.solver_seconds if r is not None else 0.0,
            "method": r.method if r is not None else "given order",
            "constraints": [c.to_json() for c in self.constraints],
            "merged": [asdict(m) for m in r.merged] if r is not None else [],
            "relaxed_alignment": dict(r.relaxed_alignment) if r is not None else {},
            "bitfield_barriers": dict(self.barriers),
            "gap": r.gap if r is not None else None,
        } | self._sharing_json()

    def _sharing_json(self) -> dict[str, Any]:
        """Padding and line transfers per operation, only for a type whose profile
        records sharing between threads (otherwise the keys are absent)."""
        r = self.result
        out: dict[str, Any] = {}
        if self.padding:
            out["padding"] = dict(self.padding)
        if r is not None and r.transfers_before is not None:
            out["transfers"] = {"before": r.transfers_before, "after": r.transfers_after}
        return out

    def kinds(self) -> list[dict[str, Any]]:
        """The per-kind figures, before and after (predicted), heaviest first."""
        r, eb, ea = self.result, self.eval_before, self.eval_after
        before, after = ((r.kinds_before, r.kinds_after) if r is not None else
                         (eb.kinds, ea.kinds) if eb is not None and ea is not None
                         else ((), ()))
        after_of = {k.entry: k for k in after}
        return [{"entry": k.entry, "invocations": k.invocations,
                 "lines": {"before": k.lines, "after": after_of[k.entry].lines
                           if k.entry in after_of else None},
                 "dirty_lines": {"before": k.dirty, "after": after_of[k.entry].dirty
                                 if k.entry in after_of else None}}
                for k in before]


def _pin_constraints(a: Analysis, pins: Sequence[str]) -> list[OrderConstraint]:
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


def decide(a: Analysis, opts: DecideOptions, profile: Profile | None = None,
           profile_path: str = "", stage: Callable[[str], None] | None = None
           ) -> OrderDecision:
    """The order of `a`'s record that `opts` ask for (see the module doc). `profile` (read
    from `profile_path`, named in errors) is needed to optimize; with `--order` it gives
    the figures. `stage` is told the stage starting ("optimizing"), for a display."""
    say = stage or (lambda _what: None)
    constraints = a.constraints + _pin_constraints(a, opts.pins)
    a.constraints = constraints
    refuse_if_needed(a, opts.fix_initializers)
    rec, body = a.record, a.body
    old = [f.name for f in rec.fields]
    lc = to_layout_constraints(constraints)
    weights = a.config.entry_weights or None
    warnings: list[str] = list(a.warnings)
    if opts.order is not None:
        say("checking the given order")
        requested = parse_order(opts.order, body)
        plan_pieces(body, requested)          # names every field once, units together
        bad = violations(constraints, old, requested)
        if bad:
            raise refuse_order(a, bad, "the given order")
        if profile is not None:
            entry, line = profile_entry(profile, profile_path, rec, a.type_name)
        else:
            entry, line = empty_profile_entry(rec), 64
        kw = dict(cache_line=opts.cache_line or line, object_align=opts.object_align,
                  constraints=lc, allow_growth=True, entry_weights=weights)
        before_ev = evaluate_order(rec, entry, old, **kw)  # type: ignore[arg-type]
        after_ev = evaluate_order(rec, entry, requested, **kw)  # type: ignore[arg-type]
        if list(after_ev.order) != requested:
            warnings.append(_adjusted_warning(rec, requested, list(after_ev.order)))
            requested = list(after_ev.order)
            plan_pieces(body, requested)
        warnings += list(after_ev.violations)
        decision = OrderDecision(
            a, old, requested, constraints, after_ev.size, dict(after_ev.offsets),
            eval_before=before_ev if profile is not None else None,
            eval_after=after_ev if profile is not None else None,
            barriers=dict(after_ev.bitfield_barriers), warnings=warnings)
    elif profile is not None:
        entry, line = profile_entry(profile, profile_path, rec, a.type_name)
        say("optimizing")
        result = optimize_layout(rec, entry, cache_line=opts.cache_line or line,
                                 object_align=opts.object_align, relax_align=opts.relax_align,
                                 constraints=lc, allow_growth=opts.allow_growth,
                                 time_limit=opts.time_limit, merge=opts.merge,
                                 entry_weights=weights,
                                 sharing_weight=a.config.sharing_weight)
        requested = list(result.order)
        bad = violations(constraints, old, requested)
        if bad:
            raise refuse_order(a, bad, "the optimizer's order")
        warnings += list(result.warnings)
        warnings += dropped_warning(rec.name, entry)
        decision = OrderDecision(a, old, requested, constraints, result.size_after,
                                 dict(result.offsets), result=result,
                                 barriers=dict(result.bitfield_barriers), warnings=warnings,
                                 padding=dict(result.padding))
    else:
        raise UserError("no order to apply", "give --profile FILE, or --order a,b,c "
                        "(or --order alphabetical)")
    assert decision.size is not None and decision.offsets is not None
    broken = layout_violation(constraints, rec, decision.offsets, decision.size)  # asserts
    if broken is not None:
        raise broken
    return decision


class OtherFields(UserError):
    """The unit's record of that name has other fields than the order names: another record
    with the same name (zstd's legacy decoder declares a `seqStore_t` of its own) or another
    configuration of it (an `#ifdef` member, other macros than the profile build's)."""


def _same_fields(type_name: str, declared: list[str], order: list[str],
                 where: Location | None) -> None:
    """The order must name exactly the fields this unit declares (`OtherFields` if not):
    such an order was made for another record, not mistyped."""
    lacks = [n for n in order if n not in declared]
    unlisted = [n for n in declared if n not in order]
    if not lacks and not unlisted:
        return
    what = []
    if lacks:
        what.append("the order names " + ", ".join(lacks) + ", which it does not declare")
    if unlisted:
        what.append("it declares " + ", ".join(unlisted) + ", which the order does not name")
    raise OtherFields(f"{type_name} has other fields in this unit than the order to apply "
                      f"({'; '.join(what)}): the order was chosen for another record of "
                      "that name or another configuration of it (other macros or flags)",
                      "give the order of this unit's record", where)


def check_order(a: Analysis, order: Sequence[str], *,
                fix_initializers: bool = False,
                padding: Mapping[str, int] | None = None) -> OrderDecision:
    """Decide for `order`, which a layout plan holds for `a`'s record (build-time mode):
    raise the analysis' refusals, `OtherFields` when the unit's record has other fields,
    an `UnsafeTransformation` when the order breaks a constraint or the placement model
    predicts a moved pin or a broken asserted size. The decision predicts no size (the
    plan's expected size is checked after rewriting). `padding`: the plan's padding of
    the record (field -> bytes declared before it), carried into the decision."""
    refuse_if_needed(a, fix_initializers)
    old = [f.name for f in a.record.fields]
    wanted = list(order)
    _same_fields(a.type_name, old, wanted,
                 a.body.units[0].location if a.body.units else None)
    bad = violations(a.constraints, old, wanted)
    if bad:
        raise refuse_order(a, bad, "the order")
    # Where the compiler would pack a moved bit-field into free bits before it, the
    # placement model asks for a zero-width bit-field barrier (see cachefit.layout).
    # The placement model's prediction also shows a broken pin or asserted size before
    # the compiler would fail on the static_assert.
    walls: dict[str, str] = {}
    try:
        ev = evaluate_order(a.record, empty_profile_entry(a.record), wanted,
                            allow_growth=True)
    except UserError:
        pass  # not a layout the model handles: the compiler check after rewriting decides
    else:
        if list(ev.order) == wanted:
            walls = dict(ev.bitfield_barriers)
            broken = layout_violation(a.constraints, a.record, ev.offsets, ev.size)
            if broken is not None:
                raise broken
    return OrderDecision(a, old, wanted, a.constraints, barriers=walls,
                         padding=dict(padding or {}))

