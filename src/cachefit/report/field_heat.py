"""Per-field and per-line access counts of a profile in one layout (the report's heat map).

For every field of a `LayoutView`: reads and writes (accesses weighted by sequence counts;
an access spanning several fields counts once for each) and the invocations that touch it.
For every cache line (object at a line start): the invocations that touch it and that write
it, lines counted as the optimizer counts them (a touched field costs all its lines). And
the holes of the layout. Each distinct access of the profile is placed once
(`cachefit.layout.access_sets`, issue 26). Arithmetic only: no files, no output.
"""

from __future__ import annotations

from dataclasses import dataclass

from cachefit.layout.access_sets import access_table
from cachefit.model.profile import Access, TypeProfile
from cachefit.report.layout_view import LayoutView, place


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
    table = access_table(tp.sequences)
    # Per distinct access (issue 26): the fields its pieces hit, and whether it writes.
    tokens = table.tokens(lambda a: (tuple(p.field for p in place(tp, view, a)
                                           if p.field is not None), a.mode == "w"))
    for k, seq in enumerate(tp.sequences):
        hit: set[str] = set()
        for t, n in table.token_counts(k, tokens).items():
            fields, write = tokens.values[t]
            for name in fields:
                hit.add(name)
                (writes if write else reads)[name] += seq.count * n
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

    def lines_of(a: Access) -> tuple[tuple[int, ...], bool]:
        hit: set[int] = set()
        for piece in place(tp, view, a):
            if piece.field is not None:
                begin, size = spans[piece.field].offset, spans[piece.field].size
            else:
                begin, size = piece.offset, piece.size
            hit.update(range(begin // cache_line,
                             (begin + max(size, 1) - 1) // cache_line + 1))
        return tuple(sorted(ln for ln in hit if ln < n_lines)), a.mode == "w"

    table = access_table(tp.sequences)
    tokens = table.tokens(lines_of)
    # Sequences whose accesses cost the same lines count alike (issue 26).
    lines_memo: dict[frozenset[int], tuple[frozenset[int], frozenset[int]]] = {}
    for seq, toks in zip(tp.sequences, table.token_sets(tokens), strict=True):
        got = lines_memo.get(toks)
        if got is None:
            hit: set[int] = set()
            dirty: set[int] = set()
            for t in toks:
                lines, write = tokens.values[t]
                hit.update(lines)
                if write:
                    dirty.update(lines)
            got = lines_memo[toks] = (frozenset(hit), frozenset(dirty))
        for ln in got[0]:
            touched[ln] += seq.count
        for ln in got[1]:
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
