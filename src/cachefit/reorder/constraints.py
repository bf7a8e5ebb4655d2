"""Order constraints and refusals found in code, with where they come from.

An `OrderConstraint` is one thing the code needs from the member order, in the optimizer's
terms (pin, contiguous unit, first member, same side of a boundary), plus the reason and the
source location that gives rise to it. A `Refusal` is a use of the record that no order can
keep working (raw I/O of the record, positional initialisers, offsets used by assembly).
This module converts constraints to `cachefit.layout.LayoutConstraints`, checks a given order
(and the compiler's layout of the result) against them and finds contradictions; it does not
look at code or choose orders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cachefit.errors import Location, UnsafeTransformation
from cachefit.layout.constraints import LayoutConstraints, SameSideConstraint, UnitConstraint
from cachefit.model import Record

ConstraintKind = Literal["pin", "first", "unit", "same_side", "size", "max_size"]


@dataclass(frozen=True)
class OrderConstraint:
    """What one use in the code needs from the order.

    pin: `fields` keep their offsets. first: `fields[0]` stays at the start. unit: `fields`
    stay contiguous, in this order. same_side: each of `fields` (all fields when empty)
    stays on its current side of `boundary` (a field name or a byte offset). size: sizeof
    stays `boundary` bytes. max_size: sizeof stays at most `boundary` bytes.
    """

    kind: ConstraintKind
    fields: tuple[str, ...]
    reason: str
    location: Location | None = None
    boundary: str | int | None = None

    def describe(self) -> str:
        if self.kind == "pin":
            what = (f"{self.fields[0]} keeps its offset" if len(self.fields) == 1 else
                    f"{', '.join(self.fields)} keep their offsets")
        elif self.kind == "first":
            what = f"{self.fields[0]} stays the first member"
        elif self.kind == "unit":
            what = f"{', '.join(self.fields)} stay together in this order"
        elif self.kind == "size":
            what = f"sizeof stays {self.boundary} bytes"
        elif self.kind == "max_size":
            what = f"sizeof stays at most {self.boundary} bytes"
        else:
            b = self.boundary
            where = f"field {b}" if isinstance(b, str) else f"byte {b}"
            if len(self.fields) == 1:
                what = f"{self.fields[0]} stays on its side of {where}"
            else:
                who = ", ".join(self.fields) if self.fields else "all fields"
                what = f"{who} stay on their side of {where}"
        return f"{what} ({self.reason})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "fields": list(self.fields),
                               "reason": self.reason,
                               "location": str(self.location) if self.location else None}
        if self.kind in ("same_side", "size", "max_size"):
            out["boundary"] = self.boundary
        return out

    def violated_by(self, before: Sequence[str], after: Sequence[str]) -> bool:
        """Whether the order `after` breaks this constraint (pins, sizes and byte boundaries:
        no; they are checked against the compiler's layout after rewriting)."""
        pos = {n: i for i, n in enumerate(after)}
        old = {n: i for i, n in enumerate(before)}
        if self.kind == "first":
            return bool(after) and after[0] != self.fields[0]
        if self.kind == "unit":
            idx = [pos[n] for n in self.fields]
            return idx != list(range(idx[0], idx[0] + len(idx)))
        if self.kind == "same_side" and isinstance(self.boundary, str):
            b = self.boundary
            names = self.fields or tuple(before)
            return any((old[n] < old[b]) != (pos[n] < pos[b]) for n in names if n != b)
        return False


@dataclass(frozen=True)
class Refusal:
    """A use of the record that rules out reordering; `fixable` with --fix-initializers."""

    what: str
    todo: str
    location: Location | None
    fixable: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "todo": self.todo,
                "location": str(self.location) if self.location else None,
                "fixable": self.fixable}

    def error(self, more: int = 0) -> UnsafeTransformation:
        also = f" (and {more} more place{'s' if more > 1 else ''} like it)" if more else ""
        return UnsafeTransformation(self.what + also, self.todo, self.location)


def dedupe(constraints: Sequence[OrderConstraint]) -> list[OrderConstraint]:
    """Drop repeats (a header seen from several units yields the same constraint)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for c in constraints:
        key = (c.kind, c.fields, c.boundary, c.reason, c.location)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def contradictions(constraints: Sequence[OrderConstraint]) -> list[str]:
    """Pairs of constraints no order can honour together (cheap checks before solving)."""
    firsts = [c for c in constraints if c.kind == "first"]
    names = sorted({c.fields[0] for c in firsts})
    if len(names) > 1:
        where = "; ".join(f"{c.fields[0]} at {c.location}" for c in firsts)
        return [f"different members must each stay first: {where}"]
    return []


def layout_violation(constraints: Sequence[OrderConstraint], before: Record,
                     offsets: Mapping[str, int], size: int) -> UnsafeTransformation | None:
    """The first pin or size constraint that a layout with these field `offsets` and
    `size` (predicted, or the compiler's after rewriting) breaks, as an error naming the
    constraint's location (e.g. the static_assert that would fail)."""
    old = {f.name: f.offset for f in before.fields}
    for c in constraints:
        problem = None
        if c.kind == "pin":
            moved = [n for n in c.fields if n in offsets and offsets[n] != old.get(n)]
            if moved:
                n = moved[0]
                problem = f"{n} would move from offset {old[n]} to {offsets[n]}"
        elif c.kind in ("size", "max_size") and isinstance(c.boundary, int):
            if size != c.boundary if c.kind == "size" else size > c.boundary:
                problem = f"sizeof would become {size} bytes"
        if problem is not None:
            return UnsafeTransformation(
                f"{problem}, but the code relies on it: {c.describe()}",
                "nothing was written; choose an order that keeps it (with --profile the "
                "optimizer honours it)", c.location)
    return None


def to_layout_constraints(constraints: Sequence[OrderConstraint],
                          pins: Sequence[str] = ()) -> LayoutConstraints:
    """The optimizer's view of `constraints` (plus `--pin` fields)."""
    pin_names = list(dict.fromkeys([*pins, *(n for c in constraints if c.kind == "pin"
                                             for n in c.fields)]))
    units = tuple(UnitConstraint(c.fields, c.reason) for c in constraints
                  if c.kind == "unit" and len(c.fields) > 1)
    first = next((c.fields[0] for c in constraints if c.kind == "first"), None)
    sides = tuple(SameSideConstraint(c.boundary, c.fields, c.reason) for c in constraints
                  if c.kind == "same_side" and c.boundary is not None)
    sizes = [c.boundary for c in constraints
             if c.kind in ("size", "max_size") and isinstance(c.boundary, int)]
    exact = [c.boundary for c in constraints
             if c.kind == "size" and isinstance(c.boundary, int)]
    return LayoutConstraints(pins=tuple(pin_names), units=units, first=first, same_side=sides,
                             max_size=min(sizes) if sizes else None,
                             min_size=max(exact) if exact else None)
