"""Heuristic for large records: assign hot blocks to cache lines, improve by local search.

Cache lines are bins of `line` bytes (minus the fixed area, pinned units and the `first`
block). Hot blocks (a hot unit with its chain) are put into lines greedily, heaviest
footprint first, next to blocks of the same footprint; blocks larger than a line get runs of
whole lines. Local search then relocates and swaps blocks between lines while the weighted
line count (then dirty line count) decreases, followed by seeded random kicks (iterated
local search) within a deterministic evaluation budget. The result is a target offset per
hot unit, to be turned into an order by `realize`. This counts lines for an object that
starts on a line boundary only; it does not place cold units or check constraints.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cachefit.layout.line_cost import fixed_lines
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, align_up


@dataclass
class _Block:
    units: list[int]
    rel: list[int]
    size: int
    align: int
    heat: int
    rank: tuple[int, int]


class _Lines:
    """Mutable assignment of blocks to lines with per-footprint line counts."""

    def __init__(self, problem: LayoutProblem, blocks: list[_Block], nlines: int,
                 reserved: list[int], fixed_fp_lines: list[list[set[int]]],
                 fps_of: list[list[list[int]]], weights: list[list[int]],
                 scale: list[int]) -> None:
        self.p = problem
        self.blocks = blocks
        self.free = [problem.line - r for r in reserved]
        self.line_of: dict[int, int] = {}
        self.runs: dict[int, list[int]] = {}
        self.members: list[set[int]] = [set() for _ in range(nlines)]
        self.fps_of = fps_of          # [kind][block] -> footprint indices
        self.weights = weights        # [kind][footprint] -> weight
        self.scale = scale            # [kind] -> objective multiplier
        # per kind, per footprint: line -> number of its blocks there (fixed lines count 1)
        self.cnt: list[list[dict[int, int]]] = [
            [{ell: 1 for ell in fl} for fl in fixed] for fixed in fixed_fp_lines]

    def _add(self, b: int, lines: list[int], sign: int) -> None:
        for kind in range(2):
            for fi in self.fps_of[kind][b]:
                c = self.cnt[kind][fi]
                for ell in lines:
                    v = c.get(ell, 0) + sign
                    if v:
                        c[ell] = v
                    else:
                        del c[ell]

    def place(self, b: int, ell: int) -> None:
        self.line_of[b] = ell
        self.members[ell].add(b)
        self.free[ell] -= self.blocks[b].size
        self._add(b, [ell], +1)

    def place_run(self, b: int, first: int) -> None:
        size = self.blocks[b].size
        line = self.p.line
        k = -(-size // line)
        lines = list(range(first, first + k))
        self.runs[b] = lines
        for ell in lines[:-1]:
            self.free[ell] = 0
        self.free[lines[-1]] -= size - (k - 1) * line
        self._add(b, lines, +1)

    def move(self, b: int, dst: int) -> None:
        src = self.line_of[b]
        self.members[src].discard(b)
        self.free[src] += self.blocks[b].size
        self._add(b, [src], -1)
        self.place(b, dst)

    def delta_move(self, b: int, src: int, dst: int,
                   skip: set[tuple[int, int]] | None = None) -> int:
        total = 0
        for kind in range(2):
            w = self.weights[kind]
            cnt = self.cnt[kind]
            d = 0
            for fi in self.fps_of[kind][b]:
                if skip is not None and (kind, fi) in skip:
                    continue
                c = cnt[fi]
                d += w[fi] * ((c.get(src, 0) == 1) * -1 + (c.get(dst, 0) == 0))
            total += d * self.scale[kind]
        return total

    def delta_swap(self, b: int, c: int) -> int:
        i, j = self.line_of[b], self.line_of[c]
        shared = {(k, fi) for k in range(2) for fi in self.fps_of[k][b]} & \
                 {(k, fi) for k in range(2) for fi in self.fps_of[k][c]}
        return self.delta_move(b, i, j, shared) + self.delta_move(c, j, i, shared)

    def cost(self) -> int:
        return sum(self.scale[k] * sum(self.weights[k][fi] * len(c)
                                       for fi, c in enumerate(self.cnt[k]))
                   for k in range(2))


def _blocks(problem: LayoutProblem, heat: dict[int, int]) -> list[_Block]:
    seen: set[int] = set()
    out = []
    for u in sorted(heat, key=lambda u: (-heat[u], problem.units[u].offset, u)):
        if u in seen:
            continue
        chain = problem.chain_of(u)
        seen.update(chain)
        if any(problem.units[v].fixed for v in chain) or problem.first in chain:
            continue
        rel, cursor = [], 0
        for v in chain:
            at = align_up(cursor, problem.units[v].align)
            rel.append(at)
            cursor = at + problem.units[v].size
        align = max(problem.units[v].align for v in chain)
        out.append(_Block(chain, rel, cursor, align, sum(heat.get(v, 0) for v in chain),
                          (problem.units[chain[0]].offset, chain[0])))
    return out


def _reserved(problem: LayoutProblem) -> list[tuple[int, int]]:
    """Byte spans no block may use: fixed area, pinned units, the `first` chain."""
    spans = [(0, problem.prefix_end)] if problem.prefix_end else []
    for u in problem.units:
        if u.fixed and u.size:
            spans.append((u.offset, u.offset + u.size))
    if problem.first is not None:
        cursor = problem.prefix_end
        start = None
        for v in problem.chain_of(problem.first):
            unit = problem.units[v]
            at = align_up(cursor, unit.align)
            start = at if start is None else start
            cursor = at + unit.size
        assert start is not None
        spans.append((problem.prefix_end, cursor))
    return spans


def cluster_targets(problem: LayoutProblem, *, max_evals: int = 400_000,
                    seed: int = 1) -> dict[int, int]:
    """Target offsets for the hot units (see the module docstring)."""
    line = problem.line
    nlines = max(1, problem.size_limit // line)
    heat: dict[int, int] = {}
    for fp in problem.lines_fp:
        for u in fp.units:
            heat[u] = heat.get(u, 0) + fp.weight
    blocks = _blocks(problem, heat)
    if not blocks:
        return {}
    unit_block = {u: bi for bi, b in enumerate(blocks) for u in b.units}
    spans = _reserved(problem)
    reserved = [0] * nlines
    for b, e in spans:
        for ell in range(b // line, min(nlines, (e - 1) // line + 1)):
            lo, hi = max(b, ell * line), min(e, (ell + 1) * line)
            reserved[ell] += max(0, hi - lo)
    first_chain = set(problem.chain_of(problem.first)) if problem.first is not None else set()

    def fixed_of(fp: WeightedFootprint) -> set[int]:
        fl = fixed_lines(problem, fp, 0)
        for b, e in spans:
            if b >= problem.prefix_end and any(u in first_chain for u in fp.units):
                fl.update(range(b // line, (e - 1) // line + 1))
        return fl

    kinds = (problem.lines_fp, problem.dirty_fp)
    fixed_fp = [[fixed_of(fp) for fp in fps] for fps in kinds]
    fps_of: list[list[list[int]]] = [[[] for _ in blocks] for _ in kinds]
    for k, fps in enumerate(kinds):
        for fi, fp in enumerate(fps):
            for bi in sorted({unit_block[u] for u in fp.units if u in unit_block}):
                fps_of[k][bi].append(fi)
    weights = [[fp.weight for fp in fps] for fps in kinds]
    dirty_total = sum(weights[1]) * (nlines + 1) + 1
    state = _Lines(problem, blocks, nlines, reserved, fixed_fp, fps_of, weights,
                   [dirty_total, 1])

    _greedy(problem, state, blocks, fps_of[0], nlines)
    _improve(state, blocks, max_evals, seed)
    return _targets(problem, state, blocks, spans, nlines)


def _greedy(problem: LayoutProblem, state: _Lines, blocks: list[_Block],
            fps_of: list[list[int]], nlines: int) -> None:
    line = problem.line
    fp_blocks: dict[int, list[int]] = {}
    for bi, fis in enumerate(fps_of):
        for fi in fis:
            fp_blocks.setdefault(fi, []).append(bi)
    order = sorted(fp_blocks, key=lambda fi: (-problem.lines_fp[fi].weight,
                                              -len(fp_blocks[fi]), fi))
    done: set[int] = set()
    for fi in order:
        todo = sorted((b for b in fp_blocks[fi] if b not in done),
                      key=lambda b: (-blocks[b].heat, blocks[b].rank))
        for b in todo:
            done.add(b)
            blk = blocks[b]
            if blk.size > line or blk.align > line:
                _place_big(state, b, nlines)
                continue
            here: dict[int, int] = {}
            for other in fp_blocks[fi]:
                if other in state.line_of:
                    ell = state.line_of[other]
                    here[ell] = here.get(ell, 0) + 1
            for ell in state.cnt[0][fi]:
                here.setdefault(ell, 0)
            choice = None
            for ell in sorted(here, key=lambda ell: (-here[ell], ell)):
                if ell < nlines and state.free[ell] >= blk.size:
                    choice = ell
                    break
            if choice is None:
                choice = next((ell for ell in range(nlines)
                               if not state.members[ell] and state.free[ell] >= blk.size
                               and not _in_run(state, ell)), None)
            if choice is None:
                choice = max(range(nlines), key=lambda ell: (state.free[ell], -ell))
            state.place(b, choice)


def _in_run(state: _Lines, ell: int) -> bool:
    return any(ell in run for run in state.runs.values())


def _place_big(state: _Lines, b: int, nlines: int) -> None:
    blk = state.blocks[b]
    line = state.p.line
    k = -(-blk.size // line)
    step = max(1, blk.align // line)
    for first in range(0, max(1, nlines - k + 1), step):
        lines = range(first, first + k)
        if all(state.free[ell] == line and not state.members[ell]
               and not _in_run(state, ell) for ell in lines):
            state.place_run(b, first)
            return
    state.place_run(b, max(0, nlines - k))


def _candidates(state: _Lines, b: int, nlines: int) -> list[int]:
    lines: set[int] = set()
    for k in range(2):
        for fi in state.fps_of[k][b]:
            lines.update(state.cnt[k][fi])
    empty = next((ell for ell in range(nlines) if not state.members[ell]
                  and state.free[ell] == state.p.line and not _in_run(state, ell)), None)
    if empty is not None:
        lines.add(empty)
    return sorted(ell for ell in lines if ell < nlines)


def _descend(state: _Lines, movable: list[int], nlines: int, budget: list[int]) -> None:
    improved = True
    while improved and budget[0] > 0:
        improved = False
        for b in movable:
            src = state.line_of[b]
            size = state.blocks[b].size
            best = 0
            best_move: tuple[int, int | None] | None = None
            for dst in _candidates(state, b, nlines):
                if dst == src:
                    continue
                if state.free[dst] >= size:
                    budget[0] -= 1
                    d = state.delta_move(b, src, dst)
                    if d < best:
                        best, best_move = d, (dst, None)
                for c in sorted(state.members[dst]):
                    csize = state.blocks[c].size
                    if state.free[dst] + csize >= size and state.free[src] + size >= csize:
                        budget[0] -= 1
                        d = state.delta_swap(b, c)
                        if d < best:
                            best, best_move = d, (dst, c)
            if best_move is not None:
                target, partner = best_move
                state.move(b, target)
                if partner is not None:
                    state.move(partner, src)
                improved = True
            if budget[0] <= 0:
                break


def _improve(state: _Lines, blocks: list[_Block], max_evals: int, seed: int) -> None:
    nlines = len(state.free)
    movable = sorted(state.line_of, key=lambda b: (-blocks[b].heat, blocks[b].rank))
    if not movable:
        return
    budget = [max_evals]
    _descend(state, movable, nlines, budget)
    best_cost = state.cost()
    best = dict(state.line_of)
    rng = random.Random(seed)
    while budget[0] > 0 and len(movable) > 1:
        # kick: a few random feasible swaps, then descend again; keep the best assignment
        for _ in range(3):
            b, c = rng.sample(movable, 2)
            i, j = state.line_of[b], state.line_of[c]
            if i == j:
                continue
            sb, sc = blocks[b].size, blocks[c].size
            if state.free[j] + sc >= sb and state.free[i] + sb >= sc:
                state.move(b, j)
                state.move(c, i)
        budget[0] -= len(movable)
        _descend(state, movable, nlines, budget)
        cost = state.cost()
        if cost < best_cost:
            best_cost, best = cost, dict(state.line_of)
        else:
            for b2, ell in best.items():
                if state.line_of[b2] != ell:
                    state.move(b2, ell)


def _targets(problem: LayoutProblem, state: _Lines, blocks: list[_Block],
             spans: list[tuple[int, int]], nlines: int) -> dict[int, int]:
    line = problem.line
    busy = sorted(spans)
    targets: dict[int, int] = {}

    def put(b: int, lo: int) -> None:
        blk = blocks[b]
        at = align_up(lo, blk.align)
        while True:
            clash = next(((s, e) for s, e in busy if s < at + blk.size and at < e
                          and blk.size > 0), None)
            if clash is None:
                break
            at = align_up(clash[1], blk.align)
        busy.append((at, at + blk.size))
        busy.sort()
        for u, r in zip(blk.units, blk.rel, strict=True):
            targets[u] = at + r

    for b, run in sorted(state.runs.items(), key=lambda kv: kv[1][0]):
        put(b, run[0] * line)
    for ell in range(nlines):
        for b in sorted(state.members[ell],
                        key=lambda b: (-blocks[b].align, -blocks[b].size, blocks[b].rank)):
            put(b, ell * line)
    return targets
