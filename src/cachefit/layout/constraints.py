"""Constraints a caller imposes on a reordering, as plain data.

The caller (the `reorder` command, after reading the source) fills a `LayoutConstraints`:
fields that must not move, groups that must stay contiguous and in order (one macro's
fields, an `offsetof` range), the field that must stay first (`container_of` casts), and
fields that must stay on the same side of a marker field or byte offset (`memset` up to
`offsetof(T, marker)`), and bounds on sizeof (`static_assert(sizeof(T) == N)`).
This module only describes them and checks their field names; it
does not resolve them to movable units (see `problem`) nor enforce them (the solvers do).
"""

from __future__ import annotations

from dataclasses import dataclass

from cachefit.errors import UserError
from cachefit.model.record_layout import Record


@dataclass(frozen=True)
class UnitConstraint:
    """`fields` must stay contiguous and in this order (alignment padding may separate them)."""

    fields: tuple[str, ...]
    reason: str = ""


@dataclass(frozen=True)
class SameSideConstraint:
    """Each of `fields` stays on the side of `boundary` it is on now.

    `boundary` is a field name (a marker: fields before it stay before it, fields after it
    stay after it) or a byte offset (fields ending at or below it stay there, fields starting
    at or above it stay there). An empty `fields` means every field of the record.
    """

    boundary: str | int
    fields: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class LayoutConstraints:
    """Everything the optimizer must honour besides C's own rules.

    `pins`: fields that keep their current offset. `units`: contiguous groups.
    `first`: a field that stays at the start of the fields area (offset 0 in C).
    `same_side`: side-of-boundary rules. `max_size`: sizeof may not exceed it (tighter
    than the default limit, the original size rounded up to whole cache lines). `min_size`:
    sizeof may not be smaller (with `max_size`, an exact size).
    """

    pins: tuple[str, ...] = ()
    units: tuple[UnitConstraint, ...] = ()
    first: str | None = None
    same_side: tuple[SameSideConstraint, ...] = ()
    max_size: int | None = None
    min_size: int | None = None

    def field_names(self) -> list[str]:
        """Every field name mentioned, in a stable order (for validation)."""
        names = list(self.pins)
        for unit in self.units:
            names += unit.fields
        if self.first is not None:
            names.append(self.first)
        for rule in self.same_side:
            if isinstance(rule.boundary, str):
                names.append(rule.boundary)
            names += rule.fields
        return names

    def check_names(self, record: Record) -> None:
        """Raise `UserError` if a constraint names a field the record does not have."""
        known = {f.name for f in record.fields}
        unknown = sorted({n for n in self.field_names() if n not in known})
        if unknown:
            raise UserError(
                f"layout constraint names unknown field(s) of {record.name}: "
                + ", ".join(unknown),
                "check the field names against `cachefit show`")
        for unit in self.units:
            if len(unit.fields) < 2:
                raise UserError(f"unit constraint {unit.fields} needs at least two fields")
            if len(set(unit.fields)) != len(unit.fields):
                raise UserError(f"unit constraint {unit.fields} repeats a field")
        if self.max_size is not None and self.max_size < 0:
            raise UserError(f"size bound {self.max_size} is negative")
        for rule in self.same_side:
            if isinstance(rule.boundary, int) and rule.boundary < 0:
                raise UserError(f"same-side boundary {rule.boundary} is negative")
