"""Place units in a given order the way a C compiler does, and check a placement.

Each unit goes at the next offset that is a multiple of its alignment, starting after the
fixed area; the flexible array member follows the last unit; the size is rounded up to the
record's alignment. A unit holding bit-fields is placed the same way with the size the
compiler gave it up to its last used byte, so a plain member following it lands where the
compiler packs it; where the compiler would instead pack the unit's first bit-field into
free bits before it, `bitfield_barriers` names the units that need an unnamed zero-width
bit-field (`unsigned int : 0;`) in front of them, which makes the compiler start them
exactly where this placement does. `violations` lists every constraint a placement breaks
(pins, chains, first, sides, size limit). This module does not count cache lines nor
choose orders.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cachefit.layout.problem import LayoutProblem, Unit, align_up


@dataclass(frozen=True)
class Placement:
    """Unit offsets (indexed by unit) for `order`, the fields' end and the record size."""

    order: tuple[int, ...]
    offsets: tuple[int, ...]
    end: int
    size: int
    fam_offset: int | None


def place_order(problem: LayoutProblem, order: list[int] | tuple[int, ...], *,
                natural: bool = False) -> Placement:
    """C placement of `order`, a permutation of all units (`natural`: ignore relaxed
    alignments, i.e. place as the unmodified declarations would be)."""
    offsets = [0] * len(problem.units)
    cursor = problem.prefix_end
    for u in order:
        unit = problem.units[u]
        at = align_up(cursor, unit.natural_align if natural else unit.align)
        offsets[u] = at
        cursor = at + unit.size
    end = cursor
    fam_offset = None
    if problem.fam is not None:
        fam_offset = align_up(cursor, max(1, min(problem.fam.align, problem.record_align)))
        end = max(end, fam_offset)
    size = align_up(max(end, problem.prefix_end), problem.record_align)
    return Placement(tuple(order), tuple(offsets), end, size, fam_offset)


BARRIER_ALIGNS = (1, 2, 4, 8)
"""Alignments an unnamed zero-width bit-field barrier can have (unsigned char, short,
int, long long)."""


def bitfield_barriers(problem: LayoutProblem, placement: Placement) -> tuple[int, ...]:
    """Bit-field units of `placement` that need a zero-width bit-field barrier before them.

    The compiler starts a unit's first member at its bit cursor (the end of the previous
    member, possibly mid-byte after a bit-field) when it fits there. The placement puts the
    unit at the next multiple of its alignment. Both agree when there is no gap, or when
    the gap equals the one the compiler left in the original layout (then it faces the same
    bit position modulo the unit's alignment and repeats its decisions), or when the first
    member would not fit in the gap anyway (`_first_member_at`). Otherwise a barrier of the
    unit's alignment moves the cursor to the placed offset.
    """
    out: list[int] = []
    cursor = 8 * problem.prefix_end
    for u in placement.order:
        unit = problem.units[u]
        at = placement.offsets[u]
        if unit.end_bits is not None:
            gap = 8 * at - cursor
            if gap and gap != unit.lead_gap_bits and \
                    _first_member_at(unit, cursor) != 8 * at + unit.lead[0]:
                out.append(u)
            cursor = 8 * at + unit.end_bits
        else:
            cursor = 8 * (at + unit.size)
    return tuple(out)


def _first_member_at(unit: Unit, cursor: int) -> int:
    """Bit where the SysV/Itanium rules put `unit`'s first member after bit `cursor`: a
    plain member at the next byte multiple of its alignment; a bit-field at the cursor if
    it fits in the storage unit (aligned, of its type's size) holding the cursor, else at
    the next multiple of its type's alignment. Only used to spare needless barriers; the
    rewriter checks the result with the compiler."""
    _rel, width, size, align = unit.lead
    if width == 0:
        return 8 * align_up(-(-cursor // 8), align)
    step = 8 * align
    if cursor % step + width > 8 * size:
        return align_up(cursor, step)
    return cursor


def original_placement(problem: LayoutProblem) -> Placement:
    """The record as the compiler laid it out (actual offsets, actual size)."""
    order = sorted(problem.movable, key=lambda u: (problem.units[u].offset, u))
    offsets = tuple(u.offset for u in problem.units)
    end = max((u.offset + u.size for u in problem.units), default=problem.prefix_end)
    fam_offset = None
    if problem.fam is not None:
        fam_offset = problem.fam.offset
    return Placement(tuple(order), offsets, end, problem.record.size, fam_offset)


def violations(problem: LayoutProblem, placement: Placement) -> list[str]:
    """Every constraint `placement` breaks, as short messages (empty when valid)."""
    out: list[str] = []
    units = problem.units
    pos = {u: i for i, u in enumerate(placement.order)}
    if sorted(pos) != problem.movable:
        return ["the order is not a permutation of the record's units"]
    for u in units:
        if placement.offsets[u.index] % u.align:
            out.append(f"{u.name} misaligned at {placement.offsets[u.index]}")
        if u.fixed and placement.offsets[u.index] != u.offset:
            out.append(f"{u.name} pinned at {u.offset} placed at {placement.offsets[u.index]}")
    for a, b in problem.succ.items():
        if pos[b] != pos[a] + 1:
            out.append(f"{units[b].name} does not follow {units[a].name}")
    if problem.first is not None and pos[problem.first] != 0:
        out.append(f"{units[problem.first].name} is not first")
    for rule in problem.sides:
        side = "before" if rule.before else "after"
        if rule.marker is not None:
            ok = (pos[rule.unit] < pos[rule.marker]) == rule.before
            where = units[rule.marker].name
        else:
            assert rule.offset is not None
            start = placement.offsets[rule.unit]
            end = start + units[rule.unit].size
            ok = end <= rule.offset if rule.before else start >= rule.offset
            where = str(rule.offset)
        if not ok:
            out.append(f"{units[rule.unit].name} is not {side} {where}")
    if placement.size > problem.size_limit:
        out.append(f"size {placement.size} exceeds the limit {problem.size_limit}")
    if placement.size < problem.size_min:
        out.append(f"size {placement.size} is below the asserted {problem.size_min}")
    for u in bitfield_barriers(problem, placement):
        if units[u].align not in BARRIER_ALIGNS:
            out.append(f"bit-field unit {units[u].name} (alignment {units[u].align}) cannot "
                       "be separated from what precedes it")
    return out


def inversions(problem: LayoutProblem, order: tuple[int, ...] | list[int]) -> tuple[int, int]:
    """(cold, hot) pairs of units whose relative order differs from the original."""
    hot = problem.hot
    cold_seen: list[tuple[int, int]] = []
    hot_seen: list[tuple[int, int]] = []
    cold_inv = hot_inv = 0
    for u in order:
        r = (problem.units[u].offset, u)
        seen = hot_seen if u in hot else cold_seen
        pos = bisect.bisect_right(seen, r)
        if u in hot:
            hot_inv += len(seen) - pos
        else:
            cold_inv += len(seen) - pos
        seen.insert(pos, r)
    return cold_inv, hot_inv
