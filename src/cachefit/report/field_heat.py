"""Per-field and per-line access counts of a profile in one layout (the report's heat map).

For every field of a `LayoutView`: reads and writes (accesses weighted by sequence counts;
an access spanning several fields counts once for each) and the invocations that touch it.
For every cache line (object at a line start): the invocations that touch it and that write
it, lines counted as the optimizer counts them (a touched field costs all its lines). And
the holes of the layout. Arithmetic only: no files, no output.
"""

from __future__ import annotations

from dataclasses import dataclass

from cachefit.report.layout_view import LayoutView, place
from cachefit.trace.profile_format import TypeProfile


@dataclass(frozen=True)
class FieldHeat:
    name: str
    offset: int
    size: int
    reads: int
    writes: int
    invocations: int
    """Invocations (sum of sequence counts) that touch the field at all."""


@dataclass(frozen=True)
class LineHeat:
    line: int
    invocations: int
    written_invocations: int


@dataclass(frozen=True)
class Hole:
    offset: int
    size: int


def field_heat(tp: TypeProfile, view: LayoutView) -> list[FieldHeat]:
    """Reads, writes and touching invocations per field, in `view`'s offset order."""
    reads = {s.name: 0 for s in view.spans}
    writes = dict(reads)
    touching = dict(reads)
    for seq in tp.sequences:
        hit: set[str] = set()
        for a in seq.accesses:
            for piece in place(tp, view, a):
                if piece.field is None:
                    continue
                hit.add(piece.field)
                (writes if a.mode == "w" else reads)[piece.field] += seq.count
        for name in hit:
            touching[name] += seq.count
    return [FieldHeat(s.name, s.offset, s.size, reads[s.name], writes[s.name],
                      touching[s.name]) for s in view.spans]


def line_heat(tp: TypeProfile, view: LayoutView, cache_line: int) -> list[LineHeat]:
    """Per cache line of the object: invocations touching it, and writing it."""
    n_lines = max(1, -(-view.size // cache_line))
    touched = [0] * n_lines
    written = [0] * n_lines
    spans = {s.name: s for s in view.spans}
    for seq in tp.sequences:
        hit: set[int] = set()
        dirty: set[int] = set()
        for a in seq.accesses:
            for piece in place(tp, view, a):
                if piece.field is not None:
                    begin, size = spans[piece.field].offset, spans[piece.field].size
                else:
                    begin, size = piece.offset, piece.size
                lines = range(begin // cache_line, (begin + max(size, 1) - 1) // cache_line + 1)
                hit.update(lines)
                if a.mode == "w":
                    dirty.update(lines)
        for ln in hit:
            if ln < n_lines:
                touched[ln] += seq.count
        for ln in dirty:
            if ln < n_lines:
                written[ln] += seq.count
    return [LineHeat(i, touched[i], written[i]) for i in range(n_lines)]


def holes(view: LayoutView) -> list[Hole]:
    """Bytes of [first field, size) covered by no field (the fixed area before the first
    traced field is not a hole)."""
    out: list[Hole] = []
    cursor = min((s.offset for s in view.spans), default=0)
    for s in view.spans:
        if s.offset > cursor:
            out.append(Hole(cursor, s.offset - cursor))
        cursor = max(cursor, s.offset + s.size)
    if cursor < view.size:
        out.append(Hole(cursor, view.size - cursor))
    return out
