"""One layout of a profiled type as the report draws it, and accesses moved into it.

A `LayoutView` gives every field the profile knows an offset and a size in one layout (the
traced one, or a new order). Accesses were recorded against the traced layout; `place`
splits an access at field boundaries of the traced layout and moves each piece with its
field (bytes outside every field, such as a vtable pointer or padding, stay where they
were). `touched_lines` counts lines the way the layout optimizer does: a touched field costs
all the lines it spans. This module holds data and does arithmetic on it; it reads no files
and decides no layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cachefit.trace.profile_format import Access, FieldSpan, TypeProfile


@dataclass(frozen=True)
class LayoutView:
    """Field spans of one layout, sorted by offset, with where the offsets came from."""

    label: str
    spans: tuple[FieldSpan, ...]
    size: int
    origin: str
    predicted: bool

    def offsets(self) -> dict[str, int]:
        return {s.name: s.offset for s in self.spans}


def make_view(label: str, tp: TypeProfile, offsets: Mapping[str, int], size: int,
              origin: str, predicted: bool) -> LayoutView:
    """The profile's fields at `offsets` (fields not in `offsets` keep their traced offset)."""
    spans = [FieldSpan(f.name, offsets.get(f.name, f.offset), f.size) for f in tp.fields]
    spans.sort(key=lambda s: (s.offset, s.name))
    return LayoutView(label, tuple(spans), size, origin, predicted)


@dataclass(frozen=True)
class PlacedPiece:
    """A piece of an access in one layout: role, offset, size, mode and the field hit."""

    role: int
    offset: int
    size: int
    mode: str
    field: str | None
    """None for bytes outside every traced field (vptr, bases without members, padding)."""


def place(tp: TypeProfile, view: LayoutView, access: Access) -> list[PlacedPiece]:
    """`access` (traced layout) split per traced field and moved to `view`'s offsets."""
    new = view.offsets()
    pieces: list[PlacedPiece] = []
    covered: list[tuple[int, int]] = []
    for f in tp.fields:
        begin = max(access.offset, f.offset)
        end = min(access.end, f.offset + f.size)
        if begin >= end:
            continue
        covered.append((begin, end))
        at = new.get(f.name, f.offset) + (begin - f.offset)
        pieces.append(PlacedPiece(access.role, at, end - begin, access.mode, f.name))
    cursor = access.offset
    for begin, end in sorted(covered) + [(access.end, access.end)]:
        if begin > cursor:
            pieces.append(PlacedPiece(access.role, cursor, begin - cursor, access.mode, None))
        cursor = max(cursor, end)
    if not pieces:  # zero-size access
        pieces.append(PlacedPiece(access.role, access.offset, 0, access.mode, None))
    return pieces


def _lines(begin: int, size: int, line: int) -> range:
    return range(begin // line, (begin + max(size, 1) - 1) // line + 1)


def touched_lines(tp: TypeProfile, view: LayoutView, accesses: Iterable[Access],
                  cache_line: int, *, written_only: bool = False) -> int:
    """Distinct (role, line) pairs touched with the object at a line start.

    A touched field costs all the lines of its span in `view`; bytes outside fields cost
    their own lines (the layout optimizer's convention)."""
    spans = {s.name: s for s in view.spans}
    seen: set[tuple[int, int]] = set()
    for a in accesses:
        if written_only and a.mode != "w":
            continue
        for piece in place(tp, view, a):
            if piece.field is not None:
                span = spans[piece.field]
                rng = _lines(span.offset, span.size, cache_line)
            else:
                rng = _lines(piece.offset, piece.size, cache_line)
            seen.update((a.role, ln) for ln in rng)
    return len(seen)
