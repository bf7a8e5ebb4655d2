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

The search (`search_sharing`) runs after the optimizer has chosen its order, only for a
type whose profile has handoffs and with a positive `sharing_weight`; everything else keeps
the optimizer's result as it is. It moves single fields and blocks of fields that share
their handoffs (a thread's counters, a lock with what it guards), adds line breaks
(padding), and never lets the record grow by more than its padding. This module does not
read profiles, choose the lines objective's layouts, nor rewrite source.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from cachefit.layout.line_cost import CostTotals, cost_totals
from cachefit.layout.placement import Placement, inversions, place_order, violations
from cachefit.layout.problem import LayoutProblem, Unit, align_up
from cachefit.model.profile import FieldSpan, TypeProfile, TypeSharing

EVALS_PER_SECOND = 2_000
"""Layouts the sharing search evaluates per second of `time_limit` (a count, not the
clock: the same input gives the same layout on any machine)."""


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


# ------------------------------------------------------------------------ the search


@dataclass(frozen=True)
class SharingOutcome:
    """What the sharing search gives the optimizer for one record.

    `placement` is in the record's units (offsets include the padding, `size` too);
    `padding` maps the first field of a unit to the bytes declared right before it.
    `improved` False: the optimizer's layout stays as it was (placement is its own)."""

    placement: Placement
    cost: CostTotals
    padding: dict[str, int]
    transfers_before: float
    """Expected transfers per operation of the record's current layout."""
    transfers_after: float
    improved: bool
    evaluations: int
    padding_gains: dict[str, float]
    """Per padded field: the transfers per operation its padding saves (the layout
    without it, the other breaks kept, minus this one)."""


Break = tuple[int, int]
"""(unit, start): the unit begins a line when the object starts `start` bytes into one
(padding declared before it fills up to there)."""


@dataclass(frozen=True)
class _State:
    order: tuple[int, ...]
    breaks: tuple[Break, ...]               # sorted
    pad: tuple[tuple[int, int], ...]        # (unit, bytes >= 1) the breaks need, sorted
    placement: Placement                    # over the record's units, padding included
    cost: CostTotals
    transfers: int                          # summed over starts (weighted) and handoffs
    key: tuple[object, ...]

    @property
    def padding(self) -> int:
        return sum(b for _u, b in self.pad)


class _Search:
    """Order + line-break states of one record, their costs, and the local search.

    A state is an order of the units and a set of line breaks; the padding is what the
    breaks need in that order (the bytes from the end of what precedes the unit to the
    next line start at the break's start offset), so a break moves with its unit and its
    padding follows. Offsets come from `placement.place_order` on the record's units with
    a `char[n]` unit per padding, exactly what the rewriter declares. `groups`: the blocks
    of units moved together (`_groups`); `base_size`: the size a state may exceed only by
    its padding."""

    def __init__(self, problem: LayoutProblem, handoffs: Sequence[HandoffFields],
                 weight: float, max_size: int | None, max_evals: int,
                 base_size: int) -> None:
        self.p = problem
        names = problem.field_unit
        self.handoffs = [h for h in handoffs if h.count > 0 and
                         any(n in names for n in h.written) and
                         any(n in names for n in h.touched)]
        self.weight = Fraction(weight)
        self.starts = tuple(problem.weighted_starts())
        self.sizes = {f.name: f.size for f in problem.record.fields}
        self.max_size = max_size
        self.max_evals = max_evals
        self.evals = 0
        shared = {names[n] for h in self.handoffs for n in (*h.written, *h.touched)
                  if n in names}
        # units the search moves or breaks before: those of the handoffs' fields
        self.shared = sorted(u for u in shared if not problem.units[u].fixed)
        self.free = [u for u in problem.movable if not problem.units[u].fixed
                     and u not in problem.succ and u not in problem.pred]
        self.base_size = base_size
        self.groups = self._groups(names)

    def _groups(self, names: Mapping[str, int]) -> list[tuple[int, ...]]:
        """Blocks of free units that move together: the units with one sharing signature
        (the handoffs that write them, the handoffs that touch them) and each handoff's
        written units; two units at least, each once, in a fixed order."""
        free = set(self.free)
        sig: dict[int, tuple[set[int], set[int]]] = {}
        found: set[tuple[int, ...]] = set()
        for i, h in enumerate(self.handoffs):
            written = {names[n] for n in h.written if n in names}
            for u in written:
                sig.setdefault(u, (set(), set()))[0].add(i)
            for u in {names[n] for n in h.touched if n in names}:
                sig.setdefault(u, (set(), set()))[1].add(i)
            found.add(tuple(sorted(written & free)))
        same: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}
        for u in sorted(sig):
            if u in free:
                w, t = sig[u]
                same.setdefault((tuple(sorted(w)), tuple(sorted(t))), []).append(u)
        found.update(tuple(us) for us in same.values())
        return sorted(g for g in found if len(g) >= 2)

    # -- measuring

    def field_offsets(self, offsets: Sequence[int]) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for unit in self.p.units:
            for name, rel in zip(unit.fields, unit.rel, strict=True):
                out[name] = (offsets[unit.index] + rel, self.sizes[name])
        return out

    def transfer_total(self, offsets: Sequence[int]) -> int:
        return transfer_total(self.handoffs, self.field_offsets(offsets), self.starts,
                              self.p.line)

    def per_operation(self, total: int) -> float:
        return total / (max(self.p.invocations, 1) * self.p.start_weight_total)

    def _place(self, order: Sequence[int], pad: Mapping[int, int]
               ) -> tuple[LayoutProblem, list[int], Placement]:
        """The record with a `char[n]` unit before each padded unit, and its placement."""
        p = self.p
        units = list(p.units)
        full: list[int] = []
        for u in order:
            if pad.get(u, 0) > 0:
                full.append(len(units))
                units.append(Unit(len(units), (), (), p.units[u].offset, pad[u], 1, 1))
            full.append(u)
        if len(units) == len(p.units):
            return p, full, place_order(p, full)
        total = sum(pad.values())
        limit = align_up(p.size_limit + total, p.record_align)
        if self.max_size is not None:
            limit = min(limit, self.max_size // p.record_align * p.record_align)
        padded = replace(p, units=tuple(units), size_limit=limit)
        return padded, full, place_order(padded, full)

    def state(self, order: Sequence[int], breaks: Sequence[Break], *, sized: bool = True
              ) -> _State | None:
        """The state of `order` with `breaks`; None if it breaks a constraint (or the
        budget is spent). `sized`: also None when the record would grow by more than its
        padding beyond `base_size` (alignment holes count against it)."""
        if self.evals >= self.max_evals:
            return None
        self.evals += 1
        p = self.p
        line = p.line
        pos = {u: i for i, u in enumerate(order)}
        pad: dict[int, int] = {}
        for u, s in sorted(breaks, key=lambda b: (pos[b[0]], b[1])):
            padded, full, placed = self._place(order, pad)
            at = full.index(u)
            if at == 0:
                cursor = p.prefix_end
            else:
                prev = full[at - 1]     # a field, or u's own padding (a second break on u)
                cursor = placed.offsets[prev] + padded.units[prev].size
            need = (-(s + cursor)) % line
            if need and align_up(cursor, p.units[u].align) + s < \
                    (s + cursor) // line * line + line:     # not already on the next line
                pad[u] = pad.get(u, 0) + need
        padded, full, placed = self._place(order, pad)
        if violations(padded, placed) or \
                sized and placed.size > self.base_size + sum(pad.values()):
            return None
        n = len(p.units)
        offsets = placed.offsets[:n]
        placement = Placement(tuple(order), offsets, placed.end, placed.size,
                              placed.fam_offset)
        cost = cost_totals(p, offsets, p.lines_fp, p.dirty_fp)
        transfers = self.transfer_total(offsets)
        combined = Fraction(cost.lines, max(p.total_count, 1)) + \
            self.weight * Fraction(transfers, max(p.invocations, 1))
        total_pad = sum(pad.values())
        key = (combined, transfers, cost.dirty, total_pad, placed.size,
               *inversions(p, list(order)))
        return _State(tuple(order), tuple(sorted(breaks)), tuple(sorted(pad.items())),
                      placement, cost, transfers, key)

    # -- the neighbourhood

    def neighbours(self, cur: _State) -> Iterator[tuple[tuple[int, ...], tuple[Break, ...]]]:
        """(order, breaks) for every move of a shared unit (also with a new break
        before it), swap with a shared unit, break added or removed, and a shared unit
        put on lines of its own (breaks before and after it), in a fixed order."""
        order = list(cur.order)
        breaks = cur.breaks
        pos = {u: i for i, u in enumerate(order)}
        free = set(self.free)
        line = self.p.line
        starts = [s for s, _w in self.starts]
        breakable = [u for u in self.shared if not self.p.units[u].bitfield]
        for u in self.shared:
            if u not in free:
                continue
            rest = [v for v in order if v != u]
            for j in range(len(order)):
                if j == pos[u]:
                    continue
                moved = tuple(rest[:j] + [u] + rest[j:])
                yield (moved, breaks)
                if u in breakable:
                    for s in starts:
                        if (u, s) not in breaks:
                            yield (moved, tuple(sorted((*breaks, (u, s)))))
        shared = set(self.shared)
        for u in self.shared:
            for v in self.free:
                if u == v or u not in free or (v in shared and v < u):
                    continue
                swapped = list(order)
                swapped[pos[u]], swapped[pos[v]] = v, u
                yield (tuple(swapped), breaks)
        yield from self.group_moves(cur)
        for u in breakable:
            at = cur.placement.offsets[u]
            after = order[pos[u] + 1] if pos[u] + 1 < len(order) else None
            for s in starts:
                if (u, s) in breaks:
                    yield (cur.order, tuple(b for b in breaks if b != (u, s)))
                    continue
                if (s + at) % line:
                    yield (cur.order, tuple(sorted((*breaks, (u, s)))))
                if after is not None and not self.p.units[after].bitfield and \
                        (after, s) not in breaks:
                    # u on lines of its own: a break before it and after it
                    yield (cur.order, tuple(sorted({*breaks, (u, s), (after, s)})))

    def group_moves(self, cur: _State) -> Iterator[tuple[tuple[int, ...], tuple[Break, ...]]]:
        """(order, breaks) for every block of `groups` moved as a block to any position
        (its units in their current order, and by decreasing alignment), also with a new
        break before it, and on lines of its own (a break before it and before what
        follows it), in a fixed order."""
        units = self.p.units
        starts = [s for s, _w in self.starts]
        for group in self.groups:
            members = set(group)
            rest = [v for v in cur.order if v not in members]
            inner = [v for v in cur.order if v in members]
            blocks = [inner]
            by_align = sorted(inner, key=lambda v: -units[v].align)
            if by_align != inner:
                blocks.append(by_align)
            for block in blocks:
                for j in range(len(rest) + 1):
                    moved = tuple(rest[:j] + block + rest[j:])
                    if moved != cur.order:
                        yield (moved, cur.breaks)
                    if units[block[0]].bitfield:
                        continue
                    after = rest[j] if j < len(rest) else None
                    for s in starts:
                        new = [tuple(sorted({*cur.breaks, (block[0], s)}))]
                        if after is not None and not units[after].bitfield:
                            new.append(tuple(sorted({*new[0], (after, s)})))
                        for breaks in new:
                            yield (moved, breaks)
                            packed = self.packed(moved, breaks)
                            if packed != moved:
                                yield (packed, breaks)

    def packed(self, order: Sequence[int], breaks: Sequence[Break]) -> tuple[int, ...]:
        """`order` with the free units between two breaks by decreasing alignment (stable):
        no alignment hole inside those lines, which the size bound would refuse."""
        at = {u for u, _s in breaks}
        free = set(self.free)
        out: list[int] = []
        run: list[int] = []
        for u in (*order, None):
            if u is None or u in at or u not in free:
                out.extend(sorted(run, key=lambda v: -self.p.units[v].align))
                run = []
                if u is not None and u not in free:
                    out.append(u)
                    continue
            if u is not None:
                run.append(u)
        return tuple(out)

    def run(self, start: _State) -> _State:
        """Best-improvement local search from `start` until no neighbour is better or the
        evaluations are spent; then `prune`."""
        cur = start
        while self.evals < self.max_evals:
            best: _State | None = None
            for order, breaks in self.neighbours(cur):
                if self.evals >= self.max_evals:
                    break
                st = self.state(order, breaks)
                if st is not None and st.key < cur.key and (best is None or st.key < best.key):
                    best = st
            if best is None:
                break
            cur = best
        return self.prune(cur)

    def prune(self, cur: _State) -> _State:
        """Drop every break whose removal does not raise the transfers: padding goes only
        where the sharing term separates fields (not where it would only save lines)."""
        for b in cur.breaks:
            self.max_evals += 1          # always measured
            st = self.state(cur.order, tuple(x for x in cur.breaks if x != b))
            if st is not None and st.transfers <= cur.transfers:
                cur = st
        return cur


def has_handoffs(profile_type: TypeProfile) -> bool:
    """Whether the type's profile records lines changing hands (the sharing term applies)."""
    return profile_type.sharing is not None and bool(profile_type.sharing.handoffs)


def search_sharing(problem: LayoutProblem, profile_type: TypeProfile,
                   start: Placement, before: Placement, *, weight: float,
                   max_size: int | None, time_limit: float) -> SharingOutcome:
    """Improve the optimizer's layout `start` for cost = lines objective + `weight` *
    transfers per operation (docs/layout.md, "Threads"), by moves, swaps, block moves and
    padding before the handoffs' fields, never growing by more than the padding beyond
    max(declared size, `start`'s size); `before` is the record's current layout (for the
    figures). `weight` 0: figures only, no search. The result is `improved` only when the
    search found a strictly better layout by (combined cost, transfers, dirty lines,
    padding, size, order changes); at equal cost the layout with fewer transfers wins."""
    assert profile_type.sharing is not None
    search = _Search(problem, handoff_fields(profile_type.sharing, profile_type.fields),
                     weight, max_size, max(1, int(EVALS_PER_SECOND * time_limit)),
                     max(problem.record.size, start.size))
    before_t = search.per_operation(search.transfer_total(before.offsets))
    first = search.state(start.order, ())
    assert first is not None, "the optimizer's layout must be valid"
    best = first
    if weight > 0 and search.shared:
        found = search.run(first)
        if found.key < first.key:
            best = found
    padding = {problem.units[u].fields[0]: b for u, b in best.pad}
    gains: dict[str, float] = {}
    for u, _b in best.pad:
        search.max_evals += 1           # always measured
        without = search.state(best.order, tuple(b for b in best.breaks if b[0] != u),
                               sized=False)
        if without is not None:
            gains[problem.units[u].fields[0]] = \
                search.per_operation(without.transfers - best.transfers)
    return SharingOutcome(best.placement, best.cost, padding, before_t,
                          search.per_operation(best.transfers), best is not first,
                          search.evals, gains)
