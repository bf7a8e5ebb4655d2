"""The sharing term of the layout objective (issue 30): lines that change hands between
threads under a layout, who causes them, and the search for an order with padding that
weighs them against the lines objective.

`transfers` evaluates one layout: for each handoff of the profile's `TypeSharing` (a
thread touched ranges `touched` of an object whose last writes by another thread covered
`written`), the byte ranges are mapped to the fields of the traced layout (a field
overlapping a range counts), and the lines that change hands are the lines holding a byte
of some written field and a byte of some touched field. Expected over the objects' start
offsets in a line as the lines objective weighs them. docs/layout.md, "Threads: lines
that change hands".

The search (`improve_sharing`) runs after the optimizer has chosen its order, only for a
type whose profile has handoffs and with a positive `sharing_weight`; everything else keeps
the optimizer's result as it is. This module does not read profiles, choose the lines
objective's layouts, nor rewrite source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cachefit.model.profile import FieldSpan, TypeSharing


@dataclass(frozen=True)
class PairBlame:
    """A written field and a touched field on one line that changes hands: the expected
    transfers of such lines (a line counts for every pair it holds, so pairs' figures may
    add up to more than the total)."""

    written: str
    touched: str
    transfers: float


@dataclass(frozen=True)
class HandoffFigures:
    """One handoff of the profile (same index as `TypeSharing.handoffs`) under a layout."""

    count: int
    written_fields: tuple[str, ...]
    """Fields of the traced layout overlapping the handoff's `written` ranges (declared
    order of the traced layout)."""
    touched_fields: tuple[str, ...]
    lines: float
    """Lines that change hands per occurrence, expected over the start offsets."""
    transfers: float
    """count * lines."""
    pairs: tuple[PairBlame, ...]
    """(written field, touched field) sharing a line that changes hands, heaviest first."""


@dataclass(frozen=True)
class SharingFigures:
    """What `transfers` measures for one layout."""

    transfers: float
    """Expected line transfers in all (sum over handoffs of count * lines)."""
    handoffs: tuple[HandoffFigures, ...]
    pairs: tuple[PairBlame, ...]
    """Per (written field, touched field) summed over the handoffs, heaviest first, ties
    by names."""

    def per_operation(self, invocations: int) -> float:
        """Transfers per operation (the lines objective's normalisation)."""
        return self.transfers / max(invocations, 1)


@dataclass(frozen=True)
class HandoffFields:
    """A handoff's ranges mapped to field names of the traced layout."""

    count: int
    written: tuple[str, ...]
    touched: tuple[str, ...]


def fields_of(ranges: Sequence[tuple[int, int]], fields_traced: Sequence[FieldSpan]
              ) -> tuple[str, ...]:
    """Fields (in the traced layout's order) with a byte in one of `ranges`; a zero-size
    field counts when its offset lies inside a range."""
    out = []
    for f in fields_traced:
        end = f.offset + max(f.size, 1)
        if any(f.offset < o + n and o < end for o, n in ranges):
            out.append(f.name)
    return tuple(out)


def handoff_fields(sharing: TypeSharing, fields_traced: Sequence[FieldSpan]
                   ) -> tuple[HandoffFields, ...]:
    """The profile's handoffs with their ranges mapped to fields, in the profile's order."""
    return tuple(HandoffFields(h.count, fields_of(h.written, fields_traced),
                               fields_of(h.touched, fields_traced))
                 for h in sharing.handoffs)


def weighted_starts(alignment: Mapping[int, int] | None, cache_line: int
                    ) -> tuple[tuple[int, int], ...]:
    """(start offset in a line, weight): the recorded base offsets modulo `cache_line`
    with their counts; ((0, 1),) when none are recorded."""
    per: dict[int, int] = {}
    for mod, n in (alignment or {}).items():
        if n > 0:
            per[mod % cache_line] = per.get(mod % cache_line, 0) + n
    return tuple(sorted(per.items())) or ((0, 1),)


def _lines(offset: int, size: int, start: int, line: int) -> range:
    if size <= 0:
        return range(0)
    b = start + offset
    return range(b // line, (b + size - 1) // line + 1)


def _changing_lines(h: HandoffFields, field_offsets: Mapping[str, tuple[int, int]],
                    start: int, line: int) -> set[int]:
    written: set[int] = set()
    for name in h.written:
        if name in field_offsets:
            written.update(_lines(*field_offsets[name], start, line))
    if not written:
        return written
    touched: set[int] = set()
    for name in h.touched:
        if name in field_offsets:
            touched.update(_lines(*field_offsets[name], start, line))
    return written & touched


def transfer_total(handoffs: Sequence[HandoffFields],
                   field_offsets: Mapping[str, tuple[int, int]],
                   starts: Sequence[tuple[int, int]], cache_line: int) -> int:
    """Sum over starts (times their weights) and handoffs (times their counts) of the lines
    that change hands: an integer; divide by the starts' total weight for the expected
    transfers (the search's measure, without blame)."""
    return sum(w * h.count * len(_changing_lines(h, field_offsets, s, cache_line))
               for s, w in starts for h in handoffs)


def transfers(sharing: TypeSharing, field_offsets: Mapping[str, tuple[int, int]],
              fields_traced: Sequence[FieldSpan], alignment: Mapping[int, int] | None,
              cache_line: int) -> SharingFigures:
    """Expected line transfers of a layout, with the fields that cause them.

    - `sharing`: the type's `TypeProfile.sharing` (its `handoffs` are used);
    - `field_offsets`: name -> (offset, size) in bytes of each field in the layout being
      evaluated (e.g. `LayoutResult.offsets` with the record's sizes; a field not listed,
      e.g. one gone since the trace, holds no line);
    - `fields_traced`: the layout at trace time (`TypeProfile.fields`), which maps the
      handoffs' byte ranges to field names (a field overlapping a range counts);
    - `alignment`: the objects' base offsets modulo the line -> counts
      (`TypeProfile.alignment`, recorded modulo a line at least `cache_line`); the
      figures are expected over these starts weighted by their counts; None or empty:
      start 0;
    - `cache_line`: bytes per line.

    A handoff of count n moves, at start s, the lines holding both a byte of a written
    field and a byte of a touched field; `transfers` is the sum of n times their number,
    expected over the starts. Per handoff and per (written field, touched field) pair:
    the expected transfers of the lines that hold both (see `PairBlame`). Pure: reads
    nothing else.
    """
    starts = weighted_starts(alignment, cache_line)
    total_w = sum(w for _s, w in starts)
    hfs = handoff_fields(sharing, fields_traced)
    out: list[HandoffFigures] = []
    all_pairs: dict[tuple[str, str], int] = {}
    grand = 0
    for h in hfs:
        lines_sum = 0
        pairs: dict[tuple[str, str], int] = {}
        for s, w in starts:
            changing = _changing_lines(h, field_offsets, s, cache_line)
            lines_sum += w * len(changing)
            if not changing:
                continue
            for wn in h.written:
                if wn not in field_offsets:
                    continue
                w_lines = changing.intersection(_lines(*field_offsets[wn], s, cache_line))
                if not w_lines:
                    continue
                for tn in h.touched:
                    if tn not in field_offsets:
                        continue
                    both = w_lines.intersection(_lines(*field_offsets[tn], s, cache_line))
                    if both:
                        pairs[(wn, tn)] = pairs.get((wn, tn), 0) + w * h.count * len(both)
        grand += h.count * lines_sum
        for key, v in pairs.items():
            all_pairs[key] = all_pairs.get(key, 0) + v
        out.append(HandoffFigures(h.count, h.written, h.touched, lines_sum / total_w,
                                  h.count * lines_sum / total_w, _blame(pairs, total_w)))
    return SharingFigures(grand / total_w, tuple(out), _blame(all_pairs, total_w))


def _blame(pairs: Mapping[tuple[str, str], int], total_w: int) -> tuple[PairBlame, ...]:
    return tuple(PairBlame(w, t, v / total_w)
                 for (w, t), v in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])))
