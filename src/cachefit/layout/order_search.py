"""Local search on complete declaration orders, with the exact cost of each order.

Simulated annealing (seeded; when the budget allows) first moves hot blocks at random next
to related ones. A descent then moves each hot block (a hot unit with its chain) next to a
hot block it shares a footprint with (any hot block when there are few), or swaps it with
one, keeping a move when the order stays valid and its key (lines, dirty lines, size, then
cold and hot order changes) decreases; at a local optimum a few blocks are moved at random
and the descent restarts from the best order found. Every candidate is placed by C rules
and measured over all object start offsets, so this handles objects that are not
cache-aligned, where line clustering is only a proxy. The number of evaluations is the
budget (deterministic: no clock is read). This module does not build initial
orders nor bound the optimum.
"""

from __future__ import annotations

import math
import random

from cachefit.layout.line_cost import weighted_totals
from cachefit.layout.placement import inversions, place_order, violations
from cachefit.layout.problem import LayoutProblem

Key = tuple[int, int, int, int, int]

FULL_NEIGHBOURHOOD = 60
"""Up to this many hot units, a block may move next to any hot unit."""
ANNEAL_PER_BLOCK = 200
"""Annealing needs about this many evaluations per hot block to beat plain descent."""


def order_key(problem: LayoutProblem, order: list[int]) -> Key | None:
    """The comparison key of a valid order, None if it breaks a constraint."""
    placement = place_order(problem, order)
    if violations(problem, placement):
        return None
    lines, dirty = weighted_totals(problem, placement.offsets)
    cold_inv, hot_inv = inversions(problem, order)
    return (lines, dirty, placement.size, cold_inv, hot_inv)


class _Search:
    def __init__(self, problem: LayoutProblem, max_evals: int) -> None:
        self.p = problem
        self.evals = 0
        self.max_evals = max_evals
        hot = problem.hot
        seen: set[int] = set()
        self.blocks: list[list[int]] = []
        for u in sorted(hot, key=lambda u: (problem.units[u].offset, u)):
            if u in seen or problem.units[u].fixed:
                continue
            chain = problem.chain_of(u)
            seen.update(chain)
            self.blocks.append(chain)
        fps_of: dict[int, set[int]] = {}
        for fi, fp in enumerate(problem.lines_fp + problem.dirty_fp):
            for u in fp.units:
                fps_of.setdefault(u, set()).add(fi)
        # where moving a block may pay off: next to hot units sharing a footprint with it
        # (next to any hot unit when there are few: position matters for unaligned objects)
        self.partners: list[set[int]] = []
        for block in self.blocks:
            mine = set().union(*(fps_of.get(u, set()) for u in block))
            self.partners.append({v for v in hot if v not in block and (
                len(hot) <= FULL_NEIGHBOURHOOD or fps_of.get(v, set()) & mine)})

    def out_of_budget(self) -> bool:
        return self.evals >= self.max_evals

    def key(self, order: list[int]) -> Key | None:
        self.evals += 1
        return order_key(self.p, order)

    def descend(self, order: list[int], best: Key) -> tuple[list[int], Key]:
        improved = True
        while improved and not self.out_of_budget():
            improved = False
            for bi, block in enumerate(self.blocks):
                members = set(block)
                rest = [u for u in order if u not in members]
                at = next(i for i, u in enumerate(order) if u in members)
                anchors: set[int] = set()
                for i, u in enumerate(rest):
                    if u in self.partners[bi]:
                        anchors.update((i, i + 1))
                for pos in sorted(anchors):
                    if pos == at:
                        continue
                    cand = rest[:pos] + block + rest[pos:]
                    key = self.key(cand)
                    if key is not None and key < best:
                        order, best, improved = cand, key, True
                        rest = [u for u in order if u not in members]
                        at = next(i for i, u in enumerate(order) if u in members)
                    if self.out_of_budget():
                        return order, best
                if len(block) == 1:
                    for v in sorted(self.partners[bi]):
                        if len(self.p.chain_of(v)) != 1 or self.p.units[v].fixed:
                            continue
                        ia, ib = order.index(block[0]), order.index(v)
                        cand = list(order)
                        cand[ia], cand[ib] = cand[ib], cand[ia]
                        key = self.key(cand)
                        if key is not None and key < best:
                            order, best, improved = cand, key, True
                        if self.out_of_budget():
                            return order, best
        return order, best

    def kick(self, order: list[int], rng: random.Random) -> list[int]:
        """Move two or three random hot blocks next to random partners."""
        order = list(order)
        for _ in range(rng.randint(2, 3)):
            bi = rng.randrange(len(self.blocks))
            block = self.blocks[bi]
            partners = sorted(self.partners[bi])
            if not partners:
                continue
            anchor = rng.choice(partners)
            members = set(block)
            order = [u for u in order if u not in members]
            pos = order.index(anchor) + rng.randint(0, 1)
            order[pos:pos] = block
        return order


def _scalar(key: Key, dirty_scale: int) -> int:
    return key[0] * dirty_scale + key[1]


def anneal(search: _Search, order: list[int], key: Key, rng: random.Random,
           steps: int) -> tuple[list[int], Key]:
    """Simulated annealing over relocations and swaps of hot blocks (lines, then dirty)."""
    problem = search.p
    scale = sum(fp.weight for fp in problem.dirty_fp) * problem.line + 1
    current, cur_key = order, key
    best, best_key = order, key
    # temperature from the typical size of a move's effect, cooled geometrically to ~0
    probes: list[int] = []
    for _ in range(min(30, steps // 10)):
        cand = search.kick(current, rng)
        k = search.key(cand)
        if k is not None:
            probes.append(abs(_scalar(k, scale) - _scalar(cur_key, scale)))
    t0 = max(1.0, sorted(probes)[len(probes) // 2] if probes else 1.0)
    for step in range(steps):
        if search.out_of_budget():
            break
        temp = t0 * (0.002 ** (step / max(steps - 1, 1)))
        bi = rng.randrange(len(search.blocks))
        block = search.blocks[bi]
        partners = sorted(search.partners[bi])
        if not partners:
            continue
        other = rng.choice(partners)
        members = set(block)
        if len(block) == 1 and len(problem.chain_of(other)) == 1 and rng.random() < 0.5:
            cand = list(current)
            ia, ib = cand.index(block[0]), cand.index(other)
            cand[ia], cand[ib] = cand[ib], cand[ia]
        else:
            cand = [u for u in current if u not in members]
            pos = cand.index(other) + rng.randint(0, 1)
            cand[pos:pos] = block
        k = search.key(cand)
        if k is None:
            continue
        delta = _scalar(k, scale) - _scalar(cur_key, scale)
        if delta <= 0 or rng.random() < math.exp(-delta / temp):
            current, cur_key = cand, k
            if k < best_key:
                best, best_key = cand, k
    return best, best_key


def improve_order(problem: LayoutProblem, order: list[int], *, max_evals: int,
                  seed: int = 1) -> list[int]:
    """A valid order at least as good as `order` (which must be valid): annealing with
    two thirds of the evaluations (when they are at least ANNEAL_PER_BLOCK per hot block),
    then descent, then kicks while the budget lasts."""
    start = order_key(problem, order)
    if start is None:
        return order
    search = _Search(problem, max_evals)
    if not search.blocks:
        return order
    rng = random.Random(seed)
    best_order, best = order, start
    if max_evals >= ANNEAL_PER_BLOCK * len(search.blocks):
        best_order, best = anneal(search, order, start, rng, max_evals * 2 // 3)
    best_order, best = search.descend(best_order, best)
    while not search.out_of_budget():
        kicked = search.kick(best_order, rng)
        key = search.key(kicked)
        if key is None:
            continue
        cand, cand_key = search.descend(kicked, key)
        if cand_key < best:
            best_order, best = cand, cand_key
    return best_order
