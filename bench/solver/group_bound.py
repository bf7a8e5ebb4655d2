"""Group bound for block_search: exact future cost of a few footprints (measurement).

For a group of footprints, project a search state (pieces left, cursor within its granule,
per footprint the capped distance to its last granule) onto the group: drop the pieces
that hold none of its footprints and the other footprints' distances. Deleting pieces
from any completion of the state, leaving their bytes empty, keeps every other piece at
an aligned, non-overlapping offset after the cursor and each group footprint's granules
unchanged, so it is a placement of the projected problem with the same cost for the
group. The projected problem's optimum (a memoised dynamic programme over the same normal
form as the main search: a piece starts right after the previous one in its granule or
at the next granule boundary; pruned by the per-footprint bound, which keeps the memoised
values exact) is therefore a lower bound on what the group's footprints pay in any
completion; the bounds of disjoint groups add. On 40 fields / seed 0, pairs and triples
give nothing above the per-footprint bound at the root; the four heaviest footprints
give +870.

Measured and NOT used by the optimizer (bench/solver/RESULTS.md, "a group bound"): per
node it is much stronger (40/0: the lines proof in 9 800 nodes instead of 83 460), but
each programme state costs about half a node of CPU; within the optimizer's 35 000-node
budget, states counted, it proves 40/0's lines (at 26 404 counted nodes) and loses 40/1's
better layout or 60/1's bound. This script only measures; it changes nothing in the
optimizer:

    .venv/bin/python bench/solver/group_bound.py --records 40/0 40/1 --nodes 35000
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_case, typed  # noqa: E402

from cachefit.layout import block_search as bs  # noqa: E402
from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.line_cost import per_invocation  # noqa: E402
from cachefit.layout.problem import LayoutProblem, align_up, build_problem  # noqa: E402


class GroupTooLarge(Exception):
    """The group's projected state space exceeded its expansion cap."""


@dataclass
class GroupBound:
    """Memoised optimum of the group `fps` (indices into the search's footprints).

    `types`: the search's item types as (size, alignment, footprint mask); `weights`: the
    search's footprint weights; `g` the granule, `k` the starts per line; `cap` the most
    states this group may expand in all (then `GroupTooLarge`)."""

    fps: tuple[int, ...]
    types: list[tuple[int, int, int]]
    weights: list[int]
    g: int
    k: int
    cap: int
    expanded: int = 0
    _map: list[int] = field(default_factory=list)
    _pt: list[tuple[int, int, int]] = field(default_factory=list)
    _loc: list[tuple[int, ...]] = field(default_factory=list)
    _w: list[int] = field(default_factory=list)
    _memo: dict[tuple[tuple[int, ...], int, tuple[int, ...]], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[tuple[int, int, int], int] = {}
        for size, align, mask in self.types:
            local = 0
            for j, i in enumerate(self.fps):
                if mask >> i & 1:
                    local |= 1 << j
            self._map.append(index.setdefault((size, align, local), len(index))
                             if local else -1)
        self._pt = list(index)
        self._loc = [tuple(j for j in range(len(self.fps)) if m >> j & 1)
                     for _s, _a, m in self._pt]
        self._w = [self.weights[i] for i in self.fps]

    def value(self, counts: tuple[int, ...], cmod: int, ages: tuple[int, ...]) -> int:
        """The group's least future cost from the search state (counts per item type,
        cursor within its granule, distances of all footprints)."""
        pc = [0] * len(self._pt)
        for ti, c in enumerate(counts):
            j = self._map[ti]
            if c and j >= 0:
                pc[j] += c
        return self._dp(tuple(pc), cmod, tuple(ages[i] for i in self.fps))

    def _singles(self, pc: tuple[int, ...], cmod: int, ages: tuple[int, ...]) -> int:
        """block_search's per-footprint bound of the projected state (a valid bound on
        its value, used to prune inside the programme)."""
        g = self.g
        left = [0] * len(self.fps)
        for j, c in enumerate(pc):
            if c:
                for j2 in self._loc[j]:
                    left[j2] += c * self._pt[j][0]
        room = g - cmod if cmod else 0
        total = 0
        for j2, b in enumerate(left):
            if not b:
                continue
            a = ages[j2]
            if a == 0:
                if b > room:
                    total += self._w[j2] * ((b - room + g - 1) // g)
            else:
                total += self._w[j2] * (a + (b + g - 1) // g - 1)
        return total

    def _dp(self, pc: tuple[int, ...], cmod: int, ages: tuple[int, ...]) -> int:
        live = 0
        for j, c in enumerate(pc):
            if c:
                live |= self._pt[j][2]
        if not live:
            return 0
        # a footprint with nothing left pays nothing more: its distance does not matter
        ages = tuple(a if live >> j & 1 else 0 for j, a in enumerate(ages))
        key = (pc, cmod, ages)
        got = self._memo.get(key)
        if got is not None:
            return got
        self.expanded += 1
        if self.expanded > self.cap:
            raise GroupTooLarge
        g, k, w = self.g, self.k, self._w
        moves = []
        for j, (size, align, _mask) in enumerate(self._pt):
            if not pc[j]:
                continue
            if cmod == 0:
                starts: tuple[int, ...] = (0,)
            else:
                o = align_up(cmod, align)
                starts = (o, g) if o < g else (g,)
            npc = pc[:j] + (pc[j] - 1,) + pc[j + 1:]
            for o in starts:
                sg = o // g
                end = o + size
                eg = (end - 1) // g
                g1 = end // g
                new = [a + g1 if a + g1 < k else k for a in ages] if g1 else list(ages)
                cost = 0
                for j2 in self._loc[j]:
                    d = ages[j2] + sg
                    cost += w[j2] * ((d if d < k else k) if d else 0) + w[j2] * (eg - sg)
                    new[j2] = g1 - eg
                nages = tuple(new)
                moves.append((cost + self._singles(npc, end % g, nages), cost, npc,
                              end % g, nages))
        moves.sort(key=lambda m: m[0])
        # branch and bound inside the programme: a move whose bound is not below the best
        # value found has no smaller value, so the minimum (the memoised value) is exact
        best: int | None = None
        for est, cost, npc, ncmod, nages in moves:
            if best is not None and est >= best:
                break
            v = cost + self._dp(npc, ncmod, nages)
            if best is None or v < best:
                best = v
        assert best is not None
        self._memo[key] = best
        return best


def groups_of(search: Any, size: int, most: int, cap: int) -> list[GroupBound]:
    """The footprints by falling weight in chunks of `size` (chunks of one left out), the
    first `most` of them."""
    order = sorted(range(search.nfp), key=lambda i: (-search.weight[i], i))
    shapes = [(t.size, t.align, t.mask) for t in search.types]
    chunks = [tuple(order[i:i + size]) for i in range(0, len(order), size)]
    return [GroupBound(c, shapes, search.weight, search.g, search.k, cap)
            for c in chunks if len(c) > 1][:most]


@dataclass
class Settings:
    """How the measured search uses groups (`dp_per_node` expansions count as a node)."""

    size: int = 4
    most: int = 1
    cap: int = 60_000
    dp_per_node: int = 2
    plain_first: int = 0


SETTINGS = Settings()
LAST: list[GroupBound] = []


class GroupSearch(bs._Search):
    """block_search's search with the bound max(its own, groups + per-footprint terms of
    the footprints in no group); lines search only. A group whose cap is reached gives
    nothing for the states it cannot finish."""

    def __init__(self, problem: LayoutProblem, *, dirty: bool, counter: Any,
                 merge: bool = True, free_gaps: bool = False) -> None:
        super().__init__(problem, dirty=dirty, counter=counter, merge=merge,
                         free_gaps=free_gaps)
        self.groups = [] if dirty else groups_of(self, SETTINGS.size, SETTINGS.most,
                                                 SETTINGS.cap)
        self.work = 0
        if not dirty:
            LAST[:] = self.groups

    def root_bound(self) -> int:
        try:
            return super().root_bound()
        except bs._Budget:
            self.groups = []
            return super().root_bound()

    def lower_bound(self, left: list[int], ages: tuple[int, ...], cmod: int,
                    counts: tuple[int, ...]) -> int:
        total = super().lower_bound(left, ages, cmod, counts)
        if not self.groups:
            return total
        g = self.g
        room = g - cmod if cmod else 0
        singles = [0] * self.nfp
        for i, b in enumerate(left):
            if b and ages[i] == 0:
                singles[i] = self.weight[i] * ((b - room + g - 1) // g) if b > room else 0
            elif b:
                singles[i] = self.weight[i] * (ages[i] + (b + g - 1) // g - 1)
        grouped = sum(singles)
        for grp in self.groups:
            before = grp.expanded
            try:
                grouped += grp.value(counts, cmod, ages) - sum(singles[i] for i in grp.fps)
            except GroupTooLarge:
                pass
            self.work += grp.expanded - before
            while self.work >= SETTINGS.dp_per_node:
                self.work -= SETTINGS.dp_per_node
                self.counter.tick()
        return max(total, grouped)


def measure(n: int, seed: int, nodes: int, grouped: bool) -> dict[str, Any]:
    """block_search (lines, then dirty lines if the lines are proven) from the recorded
    upper bound (`UPPERS`), with or without the groups."""
    hot = {20: 14, 40: 28, 60: 40}[n]
    record, profile = make_case(n, hot, 6, seed)
    problem = build_problem(record, typed(profile), cache_line=64, object_align=None,
                            relax_align=False, constraints=LayoutConstraints(),
                            allow_growth=False, merge=False)
    upper = UPPERS.get((n, seed))
    if upper is None:
        raise SystemExit(f"no upper bound recorded for {n}/{seed}")
    saved = bs._Search
    LAST.clear()
    cpu = time.process_time()
    used = 0
    if grouped and SETTINGS.plain_first:
        # first a share of the budget without groups (cheap nodes find relaxed layouts
        # below the upper bound sooner), then the rest with them
        result = bs.block_search(problem, upper=upper, max_nodes=SETTINGS.plain_first,
                                 method="dfs")
        used = result.nodes
        if result.lines_exact or result.lines_bound >= upper[0]:
            grouped = False
    if grouped:
        bs._Search = GroupSearch  # type: ignore[misc]
        try:
            result = bs.block_search(problem, upper=upper, max_nodes=nodes - used,
                                     method="dfs")
        finally:
            bs._Search = saved  # type: ignore[misc]
    elif not used:
        result = bs.block_search(problem, upper=upper, max_nodes=nodes, method="dfs")
    return {"record": f"{n}/{seed}", "groups": grouped,
            "bound": round(per_invocation(problem, result.lines_bound), 4),
            "upper": round(per_invocation(problem, upper[0]), 4),
            "lines_proven": result.lines_bound >= upper[0],
            "lines_nodes": (used if result.nodes == used else used + result.lines_nodes),
            "expansions": sum(g.expanded for g in LAST),
            "cpu_seconds": round(time.process_time() - cpu, 2)}


UPPERS = {(40, 0): (78703, 42294), (40, 1): (90382, 26485), (40, 2): (40910, 20915),
          (60, 0): (96723, 35241), (60, 1): (105647, 35175), (60, 2): (74970, 48630)}
"""(lines, dirty) totals of the optimizer's layouts without block_search at a 10-s limit
(bench/solver/block_bench.py's `upper_bound`, 17:15 UTC), fixed so runs compare."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", nargs="+", default=["40/0", "40/1", "40/2"])
    ap.add_argument("--nodes", type=int, default=35_000)
    ap.add_argument("--size", type=int, default=4)
    ap.add_argument("--most", type=int, default=1)
    ap.add_argument("--cap", type=int, default=60_000)
    ap.add_argument("--dp-per-node", type=int, default=2)
    ap.add_argument("--plain-first", type=int, default=0,
                    help="nodes without groups before the grouped search (default 0)")
    args = ap.parse_args(argv)
    SETTINGS.size, SETTINGS.most, SETTINGS.cap = args.size, args.most, args.cap
    SETTINGS.dp_per_node = args.dp_per_node
    SETTINGS.plain_first = args.plain_first
    for rec in args.records:
        n, seed = (int(x) for x in rec.split("/"))
        for grouped in (False, True):
            print(measure(n, seed, args.nodes, grouped), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
