"""A plain Python reference of block search's moves and best-first order, for the tests.

The optimizer's block search is the C library (`block_native`); these few lines restate
its relaxation independently, as the Python search it replaced did (docs/layout.md, "Exact
search for unaligned objects"): the moves from a state (`children`), the cost of a path
(`replay`) and the best-first search without its options (`best_first`), which the C
search without partial expansion and group bounds must expand state for state. Not used by
cachefit itself.
"""

from __future__ import annotations

import heapq

from cachefit.layout import block_search as bs
from cachefit.layout.problem import align_up

Move = tuple[int, int, int, int, tuple[int, ...]]


def children(search: bs._Search, counts: tuple[int, ...], cmod: int,
             ages: tuple[int, ...]) -> list[Move]:
    """(type, start in the granule, added cost, new cursor in its granule, new distances)
    for each move: the next piece goes right after the previous one (in the granule where
    that ended) or at the next granule boundary (`natural`: only where C puts it)."""
    g, k = search.g, search.k
    weight = search.weight
    out = []
    mirror = search.mirror
    for ti, t in enumerate(search.types):
        if not counts[ti]:
            continue
        if mirror is not None and ti == mirror[1] and counts[mirror[0]]:
            continue   # q only after p (the mirrored layouts have p after q)
        if cmod == 0:
            starts: tuple[int, ...] = (0,)
        else:
            o = align_up(cmod, t.align)
            starts = (o,) if search.natural else (o, g) if o < g else (g,)
        mine = search.fidx[ti]
        for o in starts:
            sg = o // g
            end = o + t.size
            eg = (end - 1) // g
            g1 = end // g
            cost = 0
            if g1:
                new = [a + g1 if a + g1 < k else k for a in ages]
            else:
                new = list(ages)
            for i in mine:
                d = ages[i] + sg
                cost += weight[i] * ((d if d < k else k) if d else 0) + weight[i] * (eg - sg)
                new[i] = g1 - eg
            out.append((ti, o, cost, end % g, tuple(new)))
    return out


def replay(search: bs._Search, path: tuple[tuple[int, int], ...]) -> int:
    """The cost of a path of moves (item type, start in the granule), every piece placed
    once."""
    counts = list(search.counts0)
    cmod = search.start % search.g
    ages = tuple(a if search.left0[i] else 0 for i, a in enumerate(search.ages0))
    cost = search.fixed_cost
    for ti, o in path:
        moves = {(c[0], c[1]): c for c in children(search, tuple(counts), cmod, ages)}
        _ti, _o, add, cmod, ages = moves[(ti, o)]
        counts[ti] -= 1
        cost += add
    assert not any(counts)
    return cost


def best_first(search: bs._Search, limit: int, floor: tuple[int, int] | None,
               budget: int) -> tuple[int | None, tuple[tuple[int, int], ...] | None, int,
                                     bool, int, int, list[tuple[int, int]]]:
    """The best-first search written plainly, from `children` and `_Search.base_bound` /
    `lower_bound`: queue key (f, -g, seq), duplicate, dominance and re-queue rules, at
    most `budget` expansions. Returns (cost, path, bound, complete, expanded, queued,
    expansions as (f, g))."""

    def lift(v: int, sep: int | None = None) -> int:
        # below the floor: its lines, and the dirty part of the separate terms (`sep`)
        if floor is None or v >= floor[0] * floor[1]:
            return v
        return floor[0] * floor[1] + (v if sep is None else sep) % floor[1]

    nt, nfp, fidx, weight = len(search.types), search.nfp, search.fidx, search.weight
    sizes = [t.size for t in search.types]
    ages0 = tuple(a if search.left0[i] else 0 for i, a in enumerate(search.ages0))
    cmod0 = search.start % search.g
    start = bytes(search.counts0) + bytes((cmod0,)) + bytes(ages0)
    g0 = search.fixed_cost
    heap = [(lift(g0 + search.base_bound(search.left0, ages0, cmod0)[0]), -g0, 0, start, -2,
             -1)]
    best_g = {start: g0}
    parents: list[int] = []
    moves: list[int] = []
    closed: dict[bytes, list[tuple[bytes, int]]] = {}
    order: list[tuple[int, int]] = []
    seq = front = 0

    def path(node: int) -> tuple[tuple[int, int], ...]:
        out = []
        while node >= 0 and moves[node] >= 0:
            out.append(divmod(moves[node], 256))
            node = parents[node]
        return tuple(reversed(out))

    while heap:
        f, neg_g, sq, state, ref, move = heapq.heappop(heap)
        front, g = f, -neg_g
        if best_g.get(state, g) < g:
            continue
        counts, cmod, ages = tuple(state[:nt]), state[nt], tuple(state[nt + 1:])
        if any(counts):
            seen = closed.setdefault(state[:nt + 1], [])
            if seen and not ref & 1 and any(
                    g - c1 >= sum(weight[i] * max(0, x - ages[i])
                                  for i, x in enumerate(a1)) for a1, c1 in seen):
                continue
            if not ref & 1 and len(seen) < 64:
                seen.append((state[nt + 1:], g))
        left = [sum(c * sizes[t] for t, c in enumerate(counts) if i in fidx[t])
                for i in range(nfp)]
        if not ref & 1 and any(counts):
            full = lift(g + search.lower_bound(left, ages, cmod, counts),
                        g + search.base_bound(left, ages, cmod)[0])
            if full > f:
                if full < limit:
                    heapq.heappush(heap, (full, neg_g, sq, state, ref | 1, move))
                continue
        if len(order) >= budget:
            return None, None, front, False, len(order), len(best_g), order
        order.append((f, g))
        me = len(parents)
        parents.append(ref >> 1)
        moves.append(move)
        if not any(counts):
            return g, path(me), g, True, len(order), len(best_g), order
        for ti, o, add, ncmod, nages in children(search, counts, cmod, ages):
            nleft = list(left)
            for i in fidx[ti]:
                nleft[i] -= sizes[ti]
            kept = bytes(0 if not nleft[i] else a for i, a in enumerate(nages))
            ng = g + add
            nf = max(f, lift(ng + search.base_bound(nleft, kept, ncmod)[0]))
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
    return None, None, limit, True, len(order), len(best_g), order
