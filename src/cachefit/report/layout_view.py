"""One layout of a profiled type as the report draws it, and accesses moved into it.

A `LayoutView` gives every field the profile knows an offset and a size in one layout (the
traced one, or a new order). Accesses were recorded against the traced layout; `place`
splits an access at field boundaries of the traced layout and moves each piece with its
field (bytes outside every field, such as a vtable pointer or padding, stay where they
were). `touched_lines` counts lines the way the layout optimizer does: a touched field costs
all the lines it spans; `sequence_lines` gives that count for every sequence of a profile,
placing each distinct access once (issue 26: thousands of summaries of thousands of
accesses). This module holds data and does arithmetic on it; it reads no files
and decides no layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cachefit.layout.access_sets import access_table
from cachefit.model.profile import Access, FieldSpan, TypeProfile


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


# What an access at (offset, end) becomes in a view, per (profile type, view): the pieces
# (offset, size, field) and the lines they cost. Large profiles repeat the same few hundred
# (offset, size) pairs millions of times (expat: 5.4 million accesses over 92 fields took the
# report two minutes); the entries hold their type and view, so their ids stay theirs.
_Pieces = tuple[tuple[int, int, str | None], ...]
_SPLITS: dict[tuple[int, int], tuple[TypeProfile, LayoutView, dict[tuple[int, int], _Pieces],
                                     dict[tuple[int, int, int], tuple[int, ...]]]] = {}
_SPLITS_KEPT = 16


def _memo(tp: TypeProfile, view: LayoutView) -> tuple[
        dict[tuple[int, int], _Pieces], dict[tuple[int, int, int], tuple[int, ...]]]:
    key = (id(tp), id(view))
    hit = _SPLITS.get(key)
    if hit is None or hit[0] is not tp or hit[1] is not view:
        if len(_SPLITS) >= _SPLITS_KEPT:
            _SPLITS.pop(next(iter(_SPLITS)))
        hit = (tp, view, {}, {})
        _SPLITS[key] = hit
    return hit[2], hit[3]


def _split(tp: TypeProfile, view: LayoutView, offset: int, end: int) -> _Pieces:
    new = view.offsets()
    pieces: list[tuple[int, int, str | None]] = []
    covered: list[tuple[int, int]] = []
    for f in tp.fields:
        begin = max(offset, f.offset)
        stop = min(end, f.offset + f.size)
        if begin >= stop:
            continue
        covered.append((begin, stop))
        pieces.append((new.get(f.name, f.offset) + (begin - f.offset), stop - begin, f.name))
    cursor = offset
    for begin, stop in sorted(covered) + [(end, end)]:
        if begin > cursor:
            pieces.append((cursor, begin - cursor, None))
        cursor = max(cursor, stop)
    if not pieces:  # zero-size access
        pieces.append((offset, 0, None))
    return tuple(pieces)


def _pieces(tp: TypeProfile, view: LayoutView, access: Access) -> _Pieces:
    splits, _ = _memo(tp, view)
    key = (access.offset, access.end)
    got = splits.get(key)
    if got is None:
        got = splits[key] = _split(tp, view, access.offset, access.end)
    return got


def place(tp: TypeProfile, view: LayoutView, access: Access) -> list[PlacedPiece]:
    """`access` (traced layout) split per traced field and moved to `view`'s offsets."""
    return [PlacedPiece(access.role, at, size, access.mode, name)
            for at, size, name in _pieces(tp, view, access)]


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
        seen.update((a.role, ln) for ln in _access_lines(tp, view, a, cache_line, spans))
    return len(seen)


def _access_lines(tp: TypeProfile, view: LayoutView, a: Access, cache_line: int,
                  spans: Mapping[str, FieldSpan]) -> tuple[int, ...]:
    """The lines one access costs in `view` (its fields' whole spans, else its bytes)."""
    _, line_memo = _memo(tp, view)
    key = (a.offset, a.end, cache_line)
    lines = line_memo.get(key)
    if lines is None:
        hit: set[int] = set()
        for at, size, name in _pieces(tp, view, a):
            if name is not None:
                span = spans[name]
                hit.update(_lines(span.offset, span.size, cache_line))
            else:
                hit.update(_lines(at, size, cache_line))
        lines = line_memo[key] = tuple(sorted(hit))
    return lines


def sequence_lines(tp: TypeProfile, view: LayoutView, cache_line: int, *,
                   written_only: bool = False) -> list[int]:
    """`touched_lines` of every sequence of `tp`, in order (issue 26: each distinct access
    is placed once, and sequences that touch the same (role, lines) share the count)."""
    spans = {s.name: s for s in view.spans}
    table = access_table(tp.sequences)

    def token(a: Access) -> tuple[int, tuple[int, ...]]:
        if written_only and a.mode != "w":
            return (a.role, ())
        return (a.role, _access_lines(tp, view, a, cache_line, spans))

    tokens = table.tokens(token)
    counted: dict[frozenset[int], int] = {}
    out = []
    for toks in table.token_sets(tokens):
        n = counted.get(toks)
        if n is None:
            seen: set[tuple[int, int]] = set()
            for t in toks:
                role, lines = tokens.values[t]
                seen.update((role, ln) for ln in lines)
            n = counted[toks] = len(seen)
        out.append(n)
    return out
