"""The report's per-sequence lines and heat map from distinct accesses (issue 26): on a
profile of many summaries and literal sequences with repeats, `sequence_lines`,
`field_heat` and `line_heat` (each distinct access placed once, sequences with the same
tokens counted alike) give exactly what a reading access by access gives."""

from __future__ import annotations

import random

import pytest

from cachefit.model.profile import Access, AccessSequence, FieldSpan, TypeProfile
from cachefit.report.field_heat import FieldHeat, LineHeat, field_heat, line_heat
from cachefit.report.layout_view import (
    LayoutView,
    make_view,
    place,
    sequence_lines,
    touched_lines,
)

FIELDS = [FieldSpan("vptr", 0, 8), FieldSpan("a", 8, 4), FieldSpan("b", 12, 4),
          FieldSpan("arr", 16, 200), FieldSpan("c", 216, 8), FieldSpan("d", 232, 2),
          FieldSpan("big", 240, 300), FieldSpan("e", 544, 8)]
SIZE = 560


def _profile(seed: int) -> TypeProfile:
    rng = random.Random(seed)
    seqs = []
    for _ in range(300):
        accesses = [Access(rng.randrange(3), rng.randrange(SIZE), rng.choice((1, 2, 4, 8, 16)),
                           rng.choice("rw"))  # type: ignore[arg-type]
                    for _ in range(rng.randint(1, 40))]
        if rng.random() < 0.3:
            accesses += rng.choices(accesses, k=rng.randint(1, 10))
            seqs.append(AccessSequence(rng.randint(1, 50), tuple(accesses), "op"))
        else:
            unique = tuple(dict.fromkeys(accesses))
            seqs.append(AccessSequence(rng.randint(1, 5000), unique, "long",
                                       tuple([7] * len(unique))))
    return TypeProfile("t", SIZE, list(FIELDS), seqs)


def _views(tp: TypeProfile, seed: int) -> list[LayoutView]:
    rng = random.Random(seed)
    names = [f.name for f in FIELDS[1:]]
    rng.shuffle(names)
    offsets, at = {"vptr": 0}, 8
    for name in names:
        f = next(f for f in FIELDS if f.name == name)
        offsets[name] = at
        at += f.size + rng.choice((0, 0, 4, 24))
    return [make_view("before", tp, {f.name: f.offset for f in FIELDS}, SIZE, "traced", False),
            make_view("after", tp, offsets, at, "predicted", True)]


def _field_heat(tp: TypeProfile, view: LayoutView) -> list[FieldHeat]:
    """Access by access (the report's reading before issue 26's change)."""
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


def _line_heat(tp: TypeProfile, view: LayoutView, cache_line: int) -> list[LineHeat]:
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


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("cache_line", [32, 64])
def test_figures_from_distinct_accesses_match_access_by_access(seed: int,
                                                                cache_line: int) -> None:
    tp = _profile(seed)
    for view in _views(tp, seed):
        for written_only in (False, True):
            assert sequence_lines(tp, view, cache_line, written_only=written_only) == [
                touched_lines(tp, view, s.accesses, cache_line, written_only=written_only)
                for s in tp.sequences]
        assert field_heat(tp, view) == _field_heat(tp, view)
        assert line_heat(tp, view, cache_line) == _line_heat(tp, view, cache_line)
    tp.sort()           # the report sorts the sequences: the figures follow them
    view = _views(tp, seed)[1]
    assert sequence_lines(tp, view, cache_line) == [
        touched_lines(tp, view, s.accesses, cache_line) for s in tp.sequences]
    assert line_heat(tp, view, cache_line) == _line_heat(tp, view, cache_line)
