"""Which pieces a member order makes of a record's member list.

`plan_pieces` checks that an order names every field of a `RecordBody` once and keeps
together what must move together (one macro expansion, one anonymous struct/union, one
declaration that defines a type), and cuts the member list into the pieces the new list
declares: whole field units, runs of declarators of a splittable declaration (`int a, b;`),
and the unnamed bit-fields placed where the layout model places them. The order these
pieces declare and the declarations they split follow from it. It produces no text
(cachefit.rewrite.member_order does) and reads no files.
"""

from __future__ import annotations

from dataclasses import dataclass

from cachefit.errors import UserError
from cachefit.frontend.member_units import FieldUnit, RecordBody


@dataclass(frozen=True)
class Piece:
    """What the block emits: a whole unit, or some declarators of a splittable declaration."""

    unit: FieldUnit
    fields: tuple[str, ...]          # in declaration order within the piece
    before: str | None = None        # an unnamed bit-field kept right before this field

    @property
    def whole(self) -> bool:
        return self.fields == self.unit.fields


def plan_pieces(body: RecordBody, order: list[str]) -> list[Piece]:
    """The pieces of the new member list, in order; raise UserError if `order` is invalid."""
    names = body.field_names()
    missing = [n for n in names if n not in order]
    extra = [n for n in order if n not in names]
    dups = sorted({n for n in order if order.count(n) > 1})
    if missing or extra or dups:
        what = []
        if missing:
            what.append("missing " + ", ".join(missing))
        if extra:
            what.append("unknown " + ", ".join(extra))
        if dups:
            what.append("repeated " + ", ".join(dups))
        raise UserError(f"the new order does not list the fields of the record exactly once "
                        f"({'; '.join(what)})", "give every field once", body.units[0].location
                        if body.units else None)
    pos = {n: i for i, n in enumerate(order)}
    pieces: list[Piece] = []
    i = 0
    while i < len(order):
        unit = body.unit_of(order[i])
        if unit.splittable:
            decl_names = [d.field for d in unit.declarators]
            run = [order[i]]
            k = decl_names.index(order[i])
            while i + 1 < len(order) and k + 1 < len(decl_names) and \
                    order[i + 1] == decl_names[k + 1]:
                run.append(order[i + 1])
                i += 1
                k += 1
            pieces.append(Piece(unit, tuple(run)))
            i += 1
            continue
        span = sorted(pos[n] for n in unit.fields)
        if span != list(range(span[0], span[0] + len(span))):
            what = (f"one expansion of macro {unit.macro}" if unit.kind == "macro" else
                    "one anonymous struct/union" if unit.kind == "anonymous" else
                    "one declaration that defines a type")
            raise UserError(f"fields {', '.join(unit.fields)} are declared by {what} and must "
                            "stay together in the new order", "keep them adjacent",
                            unit.location)
        pieces.append(Piece(unit, unit.fields))
        i += len(unit.fields)
    return _with_padding(body.units, pieces)


def _with_padding(units: list[FieldUnit], pieces: list[Piece]) -> list[Piece]:
    """Insert the unnamed bit-fields (padding, barriers): each right after the field that
    was declared right before it (after the piece holding it, when a declaration is split),
    those before every named field right before the first one; several in their original
    order. This is where the layout model places them (cachefit.layout.problem)."""
    after: dict[str, list[FieldUnit]] = {}
    leading: list[FieldUnit] = []
    first: str | None = None
    for idx, unit in enumerate(units):
        if not unit.is_padding:
            if first is None and unit.fields:
                first = unit.fields[0]
            continue
        prev = next((u for u in reversed(units[:idx]) if u.fields), None)
        if prev is None:
            leading.append(unit)
        else:
            after.setdefault(prev.fields[-1], []).append(unit)
    out: list[Piece] = []
    for p in pieces:
        if first is not None and first in p.fields:
            out += [Piece(u, (), before=first) for u in leading]
        out.append(p)
        for name in p.fields:
            out += [Piece(u, ()) for u in after.get(name, [])]
    return out


def declared_order(pieces: list[Piece]) -> tuple[str, ...]:
    """The field names as the pieces declare them."""
    return tuple(n for p in pieces for n in p.fields)


def split_declarations(body: RecordBody, pieces: list[Piece]) -> tuple[str, ...]:
    """The first field of each declaration that the pieces split."""
    return tuple(u.fields[0] for u in body.units
                 if sum(1 for p in pieces if p.unit is u) > 1)
