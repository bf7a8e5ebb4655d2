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

The children are generated from tables (H2), with the same states, costs, bounds and
order as `_Search.children` and `_Search.base_bound` would give (tested against that
plain form): the moves per (item type, cursor) are precomputed; per expansion, the bound
terms of the footprints a piece is not in depend only on how many granules the move
advances (or, within the granule, on the new cursor), so they are computed once per such
value and each child only corrects its own footprints; queue entries carry one int key
ordered as (f, -g, seq). About 1.5x fewer CPU seconds per node than the plain form.

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

from cachefit.layout.problem import align_up

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
    d dirty, d < M) with l < L is then raised to L * M + d', d' the dirty part of `sep`
    (the cost so far plus the per-footprint bound, whose dirty terms bound each dirty
    footprint whatever the lines; the next-granule penalty's least option mixes lines and
    dirty terms, so its dirty part may exceed a completion's with more lines), so the
    states are taken in the order of their dirty bound and the queue's bound speaks about
    dirty lines at once."""
    def lift(v: int, sep: int) -> int:
        if floor is None or v >= floor[0] * floor[1]:
            return v
        return floor[0] * floor[1] + sep % floor[1]

    counts0 = search.counts0
    cmod0 = search.start % search.g
    ages0 = tuple(a if search.left0[i] else 0 for i, a in enumerate(search.ages0))
    start_key = bytes(counts0) + bytes((cmod0,)) + bytes(ages0)
    g0 = search.fixed_cost
    f0 = g0 + search.base_bound(search.left0, ages0, cmod0)[0]
    f0 = lift(f0, f0)
    # queue entries: (key, state, ref, move); key orders by (f, -g, seq) (`_Queue`),
    # ref = parent expansion * 2 + full flag, move the move that led to the state
    span = max(limit, g0) + 1
    heap: list[tuple[int, bytes, int, int]] = [(_key(f0, g0, 0, span), start_key, -2, -1)]
    best_g: dict[bytes, int] = {start_key: g0}
    parents: list[int] = []
    moves: list[int] = []
    state = _Queue(heap, best_g, parents, moves, span)
    try:
        return _run(search, limit, lift, state, floor)
    except budget_error:
        # the entry being expanded had the smallest bound in the queue; every state not
        # yet expanded is in the queue (or dominated by an expanded one)
        return BestFirstOutcome(None, None, state.front, False, state.expanded,
                                len(best_g))


SEQ_BITS = 32
"""Bits of a queue key for the entry's sequence number (states queued, below 2**32)."""


@dataclass
class _Queue:
    """The search's queue and what it has expanded (parents[n], moves[n]: the expansion
    and the move that led to the n-th expanded state). A queue entry's key is one int
    ordered as (f, -g, seq): ((f * span + span - 1 - g) << SEQ_BITS) + seq, with every
    g below `span` (cheaper to compare and store than the tuple)."""

    heap: list[tuple[int, bytes, int, int]]
    best_g: dict[bytes, int]
    parents: list[int]
    moves: list[int]
    span: int
    front: int = 0
    expanded: int = 0


def _key(f: int, g: int, seq: int, span: int) -> int:
    return ((f * span + span - 1 - g) << SEQ_BITS) + seq


Move = tuple[int, int, int, int, int, int, int]


def _moves_of(search: _Search) -> list[list[tuple[Move, ...]]]:
    """Per item type and cursor, the moves `_Search.children` makes, in its order: (start
    in the granule, its granule (0 or 1), granules to the end's granule, new cursor, new
    distance of the piece's footprints (1 when it ends on a boundary, else 0), c, the
    cost of the granules it spans past its first). c: a footprint of the piece with b
    bytes left before it has (b - c) // g granules to come in the per-footprint bound
    (`_Search.base_bound`: b - size bytes left, less the room left in the granule)."""
    g = search.g
    out = []
    for t in search.types:
        wt = sum(search.weight[i] for i in range(search.nfp) if t.mask >> i & 1)
        per: list[tuple[Move, ...]] = []
        for cmod in range(g):
            if cmod == 0:
                starts: tuple[int, ...] = (0,)
            else:
                o = align_up(cmod, t.align)
                starts = (o,) if search.natural else (o, g) if o < g else (g,)
            row = []
            for o in starts:
                end = o + t.size
                sg, eg, g1, ncmod = o // g, (end - 1) // g, end // g, end % g
                room = g - ncmod if ncmod else 0
                row.append((o, sg, g1, ncmod, g1 - eg, t.size + room - g + 1, wt * (eg - sg)))
            per.append(tuple(row))
        out.append(per)
    return out


def _run(search: _Search, limit: int, lift: Callable[[int, int], int], q: _Queue,
         floor: tuple[int, int] | None) -> BestFirstOutcome:
    nt = len(search.types)
    nfp = search.nfp
    fidx = search.fidx
    g, k = search.g, search.k
    sizes = [t.size for t in search.types]
    weight = search.weight
    mine_w = [tuple((i, weight[i]) for i in fidx[t]) for t in range(nt)]
    move_table = _moves_of(search)
    mirror = search.mirror
    mp, mq = mirror if mirror is not None else (-1, -1)
    cmod_byte = [bytes((c,)) for c in range(g)]
    lifted = floor is not None
    floor_lines, scale = floor if floor is not None else (0, 1)
    heap, best_g, parents, moves = q.heap, q.best_g, q.parents, q.moves
    span = q.span
    top = span - 1
    seq_mask = (1 << SEQ_BITS) - 1
    closed: dict[bytes, list[tuple[bytes, int]]] = {}
    lefts: dict[bytes, list[int]] = {}   # per pieces left, each footprint's bytes left
    seq = 0
    while heap:
        key, state, ref, move = heapq.heappop(heap)
        f, rest = divmod(key >> SEQ_BITS, span)
        q.front = f
        g0 = top - rest
        if best_g.get(state, g0) < g0:
            continue                      # a cheaper copy was queued since
        counts = state[:nt]
        cmod = state[nt]
        ages = state[nt + 1:]
        busy = any(counts)
        if busy:
            # dominated by an expanded (or queued again) state: dropped, not counted
            ckey = state[:nt + 1]
            seen = closed.get(ckey)
            if seen is None:
                closed[ckey] = [(ages, g0)]
            else:
                if not ref & _FULL and _dominated(seen, ages, g0, weight):
                    continue
                if not ref & _FULL and len(seen) < MEMO_PER_KEY:
                    seen.append((ages, g0))
        left = lefts.get(counts)
        if left is None:
            left = [0] * nfp
            for t, c in enumerate(counts):
                if c:
                    size = c * sizes[t]
                    for i in fidx[t]:
                        left[i] += size
            lefts[counts] = left
        if not ref & _FULL and busy:
            base, open_mask = search.base_bound(left, tuple(ages), cmod)
            full = g0 + base
            if open_mask:
                full += search._next_granule_penalty(open_mask, cmod, tuple(counts),
                                                     tuple(ages))
            full = lift(full, g0 + base)
            if full > f:
                if full < limit:
                    heapq.heappush(heap, (((full * span + rest) << SEQ_BITS) + (key & seq_mask),
                                          state, ref | _FULL, move))
                continue
        search.counter.tick()
        me = len(parents)
        parents.append(ref >> 1)
        moves.append(move)
        q.expanded += 1
        if not busy:
            return BestFirstOutcome(g0, _path(parents, moves, me), g0, True, q.expanded,
                                    len(best_g))
        # per (granules moved, cursor when none): the footprints' bound terms and
        # distances when the piece placed is in none of them (`_Search.base_bound`'s
        # terms; footprints with nothing left at 0)
        shifted: dict[int, tuple[int, list[int], bytes]] = {}
        templates: dict[int, bytes] = {}
        stay: tuple[int, list[int], list[tuple[int, int, int]]] | None = None
        live = [(i, weight[i], ages[i], b, weight[i] * ((b + g - 1) // g - 1))
                for i, b in enumerate(left) if b]
        wa0 = [w * a for w, a in zip(weight, ages, strict=True)]
        wa1 = [w * (a + 1 if a < k else k) for w, a in zip(weight, ages, strict=True)]
        for ti in range(nt):
            if not counts[ti] or (ti == mq and counts[mp]):
                continue   # q only after p (the mirrored layouts have p after q)
            size = sizes[ti]
            mine = mine_w[ti]
            fidx_t = fidx[ti]
            pre = bytearray(counts)
            pre[ti] -= 1
            prefix = bytes(pre)
            for o, sg, g1, ncmod, v, c, extra in move_table[ti][cmod]:
                skey = g1 if g1 else -ncmod
                got = shifted.get(skey)
                if got is None:
                    if g1:
                        got = _shift(live, nfp, k, g1)
                    else:
                        if stay is None:
                            stay = _stay(live, nfp)
                        got = _stay_at(stay, ages, g, ncmod)
                    shifted[skey] = got
                bound, terms, base_ages = got
                # the piece's footprints: their distance (capped) plus the granules it
                # spans, and their bound terms after it
                was = wa1 if sg else wa0
                add = extra
                for i, w in mine:
                    add += was[i]
                    bound += w * ((left[i] - c) // g) - terms[i]
                ng = g0 + add
                nf = ng + bound
                if lifted:
                    lines, dirty = divmod(nf, scale)
                    if lines < floor_lines:
                        nf = floor_lines * scale + dirty
                if nf < f:
                    nf = f
                if nf >= limit:
                    continue
                tkey = skey * 256 + ncmod
                tmpl = templates.get(tkey)
                if tmpl is None:
                    tmpl = templates[tkey] = cmod_byte[ncmod] + base_ages
                nages = bytearray(tmpl)
                for i in fidx_t:
                    nages[i + 1] = v if left[i] != size else 0
                nstate = prefix + nages
                if best_g.get(nstate, limit) <= ng:
                    continue
                best_g[nstate] = ng
                seq += 1
                heapq.heappush(heap, (((nf * span + top - ng) << SEQ_BITS) + seq, nstate,
                                      me * 2, ti * 256 + o))
    return BestFirstOutcome(None, None, limit, True, q.expanded, len(best_g))


def _shift(live: list[tuple[int, int, int, int, int]], nfp: int, k: int, g1: int
           ) -> tuple[int, list[int], bytes]:
    """After a move of `g1` >= 1 granules, for the footprints the piece is not in: their
    bound terms' sum, the terms, and the distances (0 where nothing is left). `live`:
    (footprint, weight, distance, bytes left, weight * (granules those bytes need - 1))
    per footprint with bytes left."""
    total = 0
    terms = [0] * nfp
    out = bytearray(nfp)
    for i, w, a, _b, wc in live:
        a += g1
        if a > k:
            a = k
        out[i] = a
        t = w * a + wc
        terms[i] = t
        total += t
    return total, terms, bytes(out)


def _stay(live: list[tuple[int, int, int, int, int]], nfp: int
          ) -> tuple[int, list[int], list[tuple[int, int, int]]]:
    """For moves that stay in the granule (`_shift` with g1 = 0): the terms of the
    footprints at a distance (which the cursor does not change), their sum, and the
    (footprint, weight, bytes left) of those in the current granule."""
    total = 0
    terms = [0] * nfp
    here: list[tuple[int, int, int]] = []
    for i, w, a, b, wc in live:
        if a:
            t = w * a + wc
            terms[i] = t
            total += t
        else:
            here.append((i, w, b))
    return total, terms, here


def _stay_at(stay: tuple[int, list[int], list[tuple[int, int, int]]], ages: bytes, g: int,
             ncmod: int) -> tuple[int, list[int], bytes]:
    """`_shift` for a move within the granule to cursor `ncmod` (> 0): the footprints in
    the current granule may use the g - ncmod bytes left in it."""
    total, terms, here = stay
    if not here:
        return total, terms, ages
    terms = terms.copy()
    room = g - ncmod
    for i, w, b in here:
        if b > room:
            t = w * ((b - room + g - 1) // g)
            terms[i] = t
            total += t
    return total, terms, ages


def _dominated(seen: list[tuple[bytes, int]], ages: bytes, g: int,
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
