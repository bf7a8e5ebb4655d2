"""Turn target offsets for some units into a complete declaration order.

Solvers that place only the hot units (the relaxed CP-SAT model, line clustering) give
target offsets. C has no explicit offsets, so the gap before each target is filled with
cold units: a bitset dynamic program over the remaining cold blocks (in original order)
finds a subsequence after which the target unit lands exactly on its target (or, failing
that, anywhere between the start of the target's line and the target, which keeps it in
the same lines); the earliest cold blocks are preferred, so cold fields keep their
relative order as far as possible.
Where no fill exists, the unit simply follows (the caller re-evaluates the real placement).
Remaining cold blocks go to the tail in original order. Chains (unit constraints) are kept
together. This module does not evaluate costs or check constraints.
"""

from __future__ import annotations

from cachefit.layout.problem import LayoutProblem, align_up


def _blocks(problem: LayoutProblem, units: list[int]) -> list[list[int]]:
    """Chains through `units` (each once), ordered by the original offset of their head."""
    seen: set[int] = set()
    out = []
    for u in sorted(units, key=lambda u: (problem.units[u].offset, u)):
        if u in seen:
            continue
        chain = problem.chain_of(u)
        seen.update(chain)
        out.append(chain)
    out.sort(key=lambda c: (problem.units[c[0]].offset, c[0]))
    return out


def _advance(problem: LayoutProblem, cursor: int, block: list[int]) -> int:
    for u in block:
        unit = problem.units[u]
        cursor = align_up(cursor, unit.align) + unit.size
    return cursor


def _aligned_mask(base: int, width: int, align: int) -> int:
    """Bits p < width with base + p a multiple of `align`."""
    repeats = -(-width // align) + 1         # one bit per `align` bits, past the width
    every = ((1 << (repeats * align)) - 1) // ((1 << align) - 1)
    return (every << ((-base) % align)) & ((1 << width) - 1)


def _preimage(mask: int, base: int, width: int, align: int, size: int,
              masks: dict[int, int]) -> int:
    """Bits p (position base+p) with align_up(base+p, align) + size in `mask`."""
    shifted = mask >> size
    if align > 1:
        if align not in masks:
            masks[align] = _aligned_mask(base, width, align)
        shifted &= masks[align]
        spread = 1
        while spread < align:
            shifted |= shifted >> spread
            spread *= 2
    return shifted & ((1 << width) - 1)


def fill_gap(problem: LayoutProblem, cursor: int, target: int, align: int,
             blocks: list[list[int]], lowest: int | None = None) -> list[int] | None:
    """Indices into `blocks` (increasing) whose placement from `cursor` ends within
    (lowest - align, target], so a unit aligned to `align` lands in [lowest, target]
    (`lowest` defaults to `target`: exactly on it); None if none."""
    low = target if lowest is None else max(lowest, 0)
    if low <= align_up(cursor, align) <= target:
        return []
    if cursor > target:
        return None
    width = target - cursor + 1
    window = 0
    for p in range(max(cursor, low - align + 1), target + 1):
        window |= 1 << (p - cursor)
    can = [0] * (len(blocks) + 1)
    can[len(blocks)] = window
    masks: dict[int, int] = {}
    for i in range(len(blocks) - 1, -1, -1):
        pre = can[i + 1]
        for u in reversed(blocks[i]):
            unit = problem.units[u]
            pre = _preimage(pre, cursor, width, unit.align, unit.size, masks)
        can[i] = can[i + 1] | pre
    if not can[0] & 1:
        return None
    chosen = []
    pos = cursor
    for i, block in enumerate(blocks):
        nxt = _advance(problem, pos, block)
        if nxt <= target and (can[i + 1] >> (nxt - cursor)) & 1:
            chosen.append(i)
            pos = nxt
    return chosen


def realize(problem: LayoutProblem, targets: dict[int, int]) -> list[int]:
    """A full order putting each unit of `targets` on its target where cold fill allows."""
    units = problem.units
    targets = dict(targets)
    for unit in units:
        if unit.fixed:
            targets[unit.index] = unit.offset
    targeted = set(targets)
    for u in list(targeted):
        targeted.update(problem.chain_of(u))
    cold = _blocks(problem, [u.index for u in units if u.index not in targeted])
    order: list[int] = []
    cursor = problem.prefix_end
    if problem.first is not None and problem.first not in targeted:
        block = next(b for b in cold if problem.first in b)
        cold.remove(block)
        order += block
        cursor = _advance(problem, cursor, block)
    ranked = sorted((u for u in targeted if u in targets),
                    key=lambda u: (targets[u], units[u].size > 0, u))
    placed: set[int] = set()
    for u in ranked:
        if u in placed:
            continue
        chain = problem.chain_of(u)
        head = chain[0]
        head_target = targets.get(head, targets[u])
        if head == problem.first:
            chosen: list[int] | None = []
        else:
            chosen = fill_gap(problem, cursor, head_target, units[head].align, cold)
            if chosen is None:
                # Anywhere from the start of the target's line up to the target keeps
                # the unit in the same lines (or fewer).
                line_start = head_target // problem.line * problem.line
                chosen = fill_gap(problem, cursor, head_target, units[head].align, cold,
                                  lowest=line_start)
        for i in chosen or []:
            order += cold[i]
            cursor = _advance(problem, cursor, cold[i])
        for i in sorted(chosen or [], reverse=True):
            del cold[i]
        order += chain
        placed.update(chain)
        cursor = _advance(problem, cursor, chain)
    for block in cold:
        order += block
    return order


def _fill_gaps(problem: LayoutProblem, start: int, tail: list[int]) -> list[int]:
    """`tail` in order, except that the alignment gap before each unit is filled with the
    earliest later units that fit in it."""
    rest = list(tail)
    out: list[int] = []
    cursor = start
    while rest:
        u = rest.pop(0)
        unit = problem.units[u]
        target = align_up(cursor, unit.align)
        i = 0
        while cursor < target and i < len(rest):
            v = problem.units[rest[i]]
            at = align_up(cursor, v.align)
            if at + v.size <= target:
                out.append(rest.pop(i))
                cursor = at + v.size
            else:
                i += 1
        out.append(u)
        cursor = target + unit.size
    return out


def compact_tail(problem: LayoutProblem, order: list[int]) -> list[int]:
    """Shrink the padding in the trailing run of cold, unconstrained units: fill alignment
    gaps with later units, or sort by decreasing alignment if that is smaller still."""
    hot = problem.hot
    ruled = set(problem.succ) | set(problem.pred) | {r.unit for r in problem.sides}
    ruled |= {r.marker for r in problem.sides if r.marker is not None}
    if problem.first is not None:
        ruled.add(problem.first)
    cut = len(order)
    while cut > 0:
        u = order[cut - 1]
        if u in hot or u in ruled or problem.units[u].fixed:
            break
        cut -= 1
    head, tail = order[:cut], order[cut:]
    if len(tail) < 2:
        return order
    cur = _advance(problem, problem.prefix_end, head)
    ra = problem.record_align

    def size(t: list[int]) -> int:
        return align_up(_advance(problem, cur, t), ra)

    best = tail
    for cand in (_fill_gaps(problem, cur, tail),
                 sorted(tail, key=lambda u: -problem.units[u].align)):
        if problem.size_min <= size(cand) < size(best):
            best = cand
    return head + best
