"""Best-first (A*) search of block_search's granule relaxation, with a proven bound at any time.

The states, moves and bounds are `block_search._Search`'s (docs/layout.md, "Exact search for
unaligned objects"): a state is (pieces left per item type, cursor within its granule, per
footprint the capped distance to its last granule); its cost so far is g and the
per-footprint bound plus the next-granule penalty is h, admissible (never above what any
completion adds). States are expanded by increasing f = g + h (raised to the parent's f:
the parent's f bounds every completion through it), deepest first among equal f. So:

* the first complete layout taken from the queue is the relaxation's optimum (every
  layout still queued or reachable costs at least its f, which is at least the one taken);
* when the budget ends first, the smallest f still queued is a lower bound on every
  relaxed layout, so on every C layout: a proof that rises continuously with the budget,
  where the depth-first search proves only the thresholds it exhausted, each pass
  re-exploring what the previous one did.

Two prunings keep the queue small, both as in the depth-first search: a state equal to a
queued one with no smaller g is not queued, and a state taken from the queue whose
(pieces left, cursor) was taken before with cost c1 and distances a is dropped when
c1 + sum_F w_F max(0, a_F - b_F) <= g (any completion of it is no cheaper after the
earlier state, whose subtree is searched or still queued). The next-granule penalty is
computed only when a state is taken from the queue (children are queued with the cheaper
per-footprint part; a state whose full f is higher goes back once), so its cost is paid
per expansion, not per child. States are bytes (counts, cursor, distances: the caller
checks that they fit) and moves are indices, to keep the queue's memory down.

The budget is the search's counted nodes (one per expansion; states dropped as
dominated or stale are not counted; deterministic); the wall clock is only the counter's
backstop. This module neither builds item types nor judges
layouts: `block_search.block_search` does.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cachefit.layout.block_search import _Search

MEMO_PER_KEY = 64
"""Expanded (distances, cost) entries kept per (pieces left, cursor) for dominance."""

_FULL = 1
"""Flag in a queue entry: its f includes the next-granule penalty."""


@dataclass(frozen=True)
class BestFirstOutcome:
    """`cost`, `path`: the relaxation's optimum and its moves (item type, start in the
    granule) when one is below the limit, else None. `bound`: every relaxed layout costs
    at least this (the limit when the search proved none is below it). `complete`: the
    search ended by itself (optimum found, or none below the limit), not on the budget."""

    cost: int | None
    path: tuple[tuple[int, int], ...] | None
    bound: int
    complete: bool
    expanded: int
    queued: int


def best_first(search: _Search, limit: int, budget_error: type[Exception],
               floor: tuple[int, int] | None = None) -> BestFirstOutcome:
    """The cheapest relaxed layout of cost below `limit`, or a proven lower bound when
    `search.counter` runs out (it raises `budget_error`).

    `floor` = (L, M) for the search over lines * M + dirty (M above any dirty total) when
    every relaxed layout is known to have at least L lines: a bound v = l * M + d (l lines,
    d dirty, d < M) is then raised to max(l, L) * M + d, so the states are taken in the
    order of their dirty bound and the queue's bound speaks about dirty lines at once."""
    def lift(v: int) -> int:
        if floor is None:
            return v
        lines, dirty = divmod(v, floor[1])
        return v if lines >= floor[0] else floor[0] * floor[1] + dirty

    counts0 = search.counts0
    cmod0 = search.start % search.g
    ages0 = tuple(a if search.left0[i] else 0 for i, a in enumerate(search.ages0))
    start_key = bytes(counts0) + bytes((cmod0,)) + bytes(ages0)
    g0 = search.fixed_cost
    f0 = lift(g0 + search.base_bound(search.left0, ages0, cmod0)[0])
    # queue entries: (f, -g, seq, state, ref); ref = parent expansion * 2 + full flag,
    # moves[expansion] the move that led to it
    heap: list[tuple[int, int, int, bytes, int, int]] = [(f0, -g0, 0, start_key, -2, -1)]
    best_g: dict[bytes, int] = {start_key: g0}
    parents: list[int] = []
    moves: list[int] = []
    state = _Queue(heap, best_g, parents, moves)
    try:
        return _run(search, limit, lift, state)
    except budget_error:
        # the entry being expanded had the smallest bound in the queue; every state not
        # yet expanded is in the queue (or dominated by an expanded one)
        return BestFirstOutcome(None, None, state.front, False, state.expanded,
                                len(best_g))


@dataclass
class _Queue:
    heap: list[tuple[int, int, int, bytes, int, int]]
    best_g: dict[bytes, int]
    parents: list[int]
    moves: list[int]
    front: int = 0
    expanded: int = 0


def _run(search: _Search, limit: int, lift: Callable[[int], int], q: _Queue
         ) -> BestFirstOutcome:
    nt = len(search.types)
    nfp = search.nfp
    fidx = search.fidx
    sizes = [t.size for t in search.types]
    weight = search.weight
    heap, best_g, parents, moves = q.heap, q.best_g, q.parents, q.moves
    closed: dict[bytes, list[tuple[bytes, int]]] = {}
    seq = 0
    while heap:
        f, neg_g, _seq, state, ref, move = heapq.heappop(heap)
        q.front = f
        g = -neg_g
        if best_g.get(state, g) < g:
            continue                      # a cheaper copy was queued since
        counts = tuple(state[:nt])
        cmod = state[nt]
        ages = tuple(state[nt + 1:])
        if any(counts):
            # dominated by an expanded (or queued again) state: dropped, not counted
            key = state[:nt + 1]
            seen = closed.get(key)
            if seen is None:
                closed[key] = [(state[nt + 1:], g)]
            else:
                if not ref & _FULL and _dominated(seen, ages, g, weight):
                    continue
                if not ref & _FULL and len(seen) < MEMO_PER_KEY:
                    seen.append((state[nt + 1:], g))
        left = [0] * nfp
        for t, c in enumerate(counts):
            if c:
                size = c * sizes[t]
                for i in fidx[t]:
                    left[i] += size
        if not ref & _FULL and any(counts):
            full = lift(g + search.lower_bound(left, ages, cmod, counts))
            if full > f:
                if full < limit:
                    heapq.heappush(heap, (full, neg_g, _seq, state, ref | _FULL, move))
                continue
        search.counter.tick()
        me = len(parents)
        parents.append(ref >> 1)
        moves.append(move)
        q.expanded += 1
        if not any(counts):
            return BestFirstOutcome(g, _path(parents, moves, me), g, True, q.expanded,
                                    len(best_g))
        done = [i for i in range(nfp) if not left[i]]
        for ti, o, add, ncmod, nages in search.children(counts, cmod, ages):
            # footprints with nothing left: their distance no longer matters (kept at 0)
            nleft = left.copy()
            size = sizes[ti]
            gone = done
            for i in fidx[ti]:
                nleft[i] -= size
                if not nleft[i]:
                    gone = gone + [i]
            if gone:
                zeroed = list(nages)
                for i in gone:
                    zeroed[i] = 0
                kept = bytes(zeroed)
            else:
                kept = bytes(nages)
            ng = g + add
            nf = lift(ng + search.base_bound(nleft, kept, ncmod)[0])
            if nf < f:
                nf = f
            if nf >= limit:
                continue
            ncounts = bytearray(state[:nt])
            ncounts[ti] -= 1
            nstate = bytes(ncounts) + bytes((ncmod,)) + kept
            if best_g.get(nstate, limit) <= ng:
                continue
            best_g[nstate] = ng
            seq += 1
            heapq.heappush(heap, (nf, -ng, seq, nstate, me * 2, ti * 256 + o))
    return BestFirstOutcome(None, None, limit, True, q.expanded, len(best_g))


def _dominated(seen: list[tuple[bytes, int]], ages: tuple[int, ...], g: int,
               weight: list[int]) -> bool:
    """An expanded state with the same pieces left and cursor, cost c1 and distances a,
    makes this one (distances `ages`, cost g) useless when c1 + sum w max(0, a - b) <= g."""
    for old_ages, old_cost in seen:
        slack = g - old_cost
        if slack < 0:
            continue
        for i, x in enumerate(old_ages):
            y = ages[i]
            if x > y:
                slack -= weight[i] * (x - y)
                if slack < 0:
                    break
        else:
            return True
    return False


def _path(parents: list[int], moves: list[int], node: int) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    while node >= 0 and moves[node] >= 0:
        out.append(divmod(moves[node], 256))
        node = parents[node]
    return tuple(reversed(out))
