"""Count cache lines for a placement, and the simple lower bound on that count.

A footprint occupies the lines its units' bytes (and its fixed-area spans) fall in, for an
object starting at offset `s` of a line; totals are weighted by footprint counts and summed
over the start offsets of the placement model, each start weighted by its weight (1 in
the uniform model; the observed distribution's weight when the profile recorded where
the objects start, issue 26), so the expected value is total / total start weight. This
module does not place units nor search; it only measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cachefit.layout.problem import LayoutProblem, WeightedFootprint
from cachefit.layout.result import KindFigures, LineFigures


@dataclass(frozen=True)
class CostTotals:
    """Weighted line counts: `lines`/`dirty` summed over starts (times the starts'
    weights), `*_worst` the worst start."""

    lines: int
    dirty: int
    lines_worst: int
    dirty_worst: int


def footprint_lines(problem: LayoutProblem, fp: WeightedFootprint,
                    offsets: Sequence[int], start: int) -> int:
    """Distinct lines `fp` occupies when the object begins `start` bytes into a line."""
    line = problem.line
    seen: set[int] = set()
    for b, e in fp.fixed:
        seen.update(range((start + b) // line, (start + e - 1) // line + 1))
    for u in fp.units:
        size = problem.units[u].size
        if size:
            b = start + offsets[u]
            seen.update(range(b // line, (b + size - 1) // line + 1))
    return len(seen)


def weighted_lines(problem: LayoutProblem, fps: Sequence[WeightedFootprint],
                   offsets: Sequence[int]) -> list[int]:
    """Per start offset: the weighted sum of lines over `fps`."""
    return [sum(fp.weight * footprint_lines(problem, fp, offsets, s) for fp in fps)
            for s in problem.starts]


def over_starts(problem: LayoutProblem, per_start: Sequence[int]) -> int:
    """Values per start (in `problem.starts` order) summed with the starts' weights."""
    if problem.start_weights:
        return sum(w * v for w, v in zip(problem.start_weights, per_start, strict=True))
    return sum(per_start)


def footprint_lines_total(problem: LayoutProblem, fp: WeightedFootprint,
                          offsets: Sequence[int]) -> int:
    """`footprint_lines` summed over all start offsets (with their weights), in one pass.

    Observed starts: the weighted sum of `footprint_lines`. Uniform model: with granules
    of g = min(object_align, line) bytes and G = line / g starts, the sum over starts
    equals the size of the union of the windows (k - G, k] over the touched
    granules k: G for the first granule, then per further granule the distance to the
    previous touched one, capped at G.
    """
    if problem.start_weights:
        return sum(w * footprint_lines(problem, fp, offsets, s)
                   for s, w in problem.weighted_starts())
    gran = min(problem.object_align, problem.line)
    big_g = problem.line // gran
    runs: list[tuple[int, int]] = [(b // gran, (e - 1) // gran) for b, e in fp.fixed]
    for u in fp.units:
        size = problem.units[u].size
        if size:
            b = offsets[u]
            runs.append((b // gran, (b + size - 1) // gran))
    if not runs:
        return 0
    runs.sort()
    total = big_g
    last = runs[0][0]
    for a, b in runs:
        if b <= last and a <= last:
            continue
        if a > last:
            total += min(a - last, big_g)
            last = a
        total += b - last
        last = b
    return total


def weighted_totals(problem: LayoutProblem, offsets: Sequence[int]) -> tuple[int, int]:
    """(lines, dirty lines) weighted and summed over starts: the search's objective."""
    lines = sum(fp.weight * footprint_lines_total(problem, fp, offsets)
                for fp in problem.lines_fp)
    dirty = sum(fp.weight * footprint_lines_total(problem, fp, offsets)
                for fp in problem.dirty_fp)
    return lines, dirty


def cost_totals(problem: LayoutProblem, offsets: Sequence[int],
                lines_fp: Sequence[WeightedFootprint],
                dirty_fp: Sequence[WeightedFootprint]) -> CostTotals:
    per_lines = weighted_lines(problem, lines_fp, offsets)
    per_dirty = weighted_lines(problem, dirty_fp, offsets)
    return CostTotals(over_starts(problem, per_lines), over_starts(problem, per_dirty),
                      max(per_lines, default=0), max(per_dirty, default=0))


def per_invocation(problem: LayoutProblem, total: int) -> float:
    """A total summed over sequences (weighted by count) and start offsets (with their
    weights), per invocation and expected over the start offsets."""
    return total / (max(problem.total_count, 1) * problem.start_weight_total)


def line_figures(problem: LayoutProblem, totals: CostTotals) -> LineFigures:
    """`totals` per invocation: expected over start offsets, and at the worst start."""
    n = max(problem.total_count, 1)
    return LineFigures(per_invocation(problem, totals.lines), per_invocation(problem, totals.dirty),
                       totals.lines_worst / n, totals.dirty_worst / n)


def fixed_lines(problem: LayoutProblem, fp: WeightedFootprint, start: int) -> set[int]:
    """Lines `fp` occupies whatever the layout: its fixed-area spans and pinned units."""
    line = problem.line
    seen: set[int] = set()
    for b, e in fp.fixed:
        seen.update(range((start + b) // line, (start + e - 1) // line + 1))
    for u in fp.units:
        unit = problem.units[u]
        if unit.fixed and unit.size:
            b = start + unit.offset
            seen.update(range(b // line, (b + unit.size - 1) // line + 1))
    return seen


def footprint_bound(problem: LayoutProblem, fp: WeightedFootprint, start: int) -> int:
    """Lines `fp` needs at least at one start: its bytes in whole lines, or its fixed lines."""
    return max(-(-footprint_bytes(problem, fp) // problem.line),
               len(fixed_lines(problem, fp, start)))


def footprint_bytes(problem: LayoutProblem, fp: WeightedFootprint) -> int:
    return sum(e - b for b, e in fp.fixed) + sum(problem.units[u].size for u in fp.units)


def footprint_bound_total(problem: LayoutProblem, fp: WeightedFootprint) -> int:
    """Lines `fp` needs at least, summed over all start offsets of the placement model
    (with their weights).

    Observed starts: the weighted sum of the per-start bounds. Uniform model: with
    G = line / object_align starts, the sum over starts of the lines a set of bytes
    occupies equals the size of the union of the windows (g - G, g] over the touched
    object_align-sized granules g; m distinct granules give at least G - 1 + m, and
    m >= ceil(bytes / object_align). Also at least the sum of the per-start bounds.
    """
    if problem.start_weights:
        return sum(w * footprint_bound(problem, fp, s) for s, w in problem.weighted_starts())
    per_start = sum(footprint_bound(problem, fp, s) for s in problem.starts)
    g = len(problem.starts)
    if g == 1:
        return per_start
    granules = -(-footprint_bytes(problem, fp) // problem.object_align)
    return max(per_start, g - 1 + granules)


def simple_bound(problem: LayoutProblem, fps: Sequence[WeightedFootprint]) -> int:
    """Sum over footprints of `weight * footprint_bound_total` (valid for any layout)."""
    return sum(fp.weight * footprint_bound_total(problem, fp) for fp in fps)


def kind_figures(problem: LayoutProblem, offsets: Sequence[int]) -> tuple[KindFigures, ...]:
    """Per kind of operation, its figures at `offsets` (per invocation of that kind,
    expected over start offsets) and its per-footprint lower bounds."""
    out = []
    for k in problem.kinds:
        n = max(k.count, 1) * problem.start_weight_total
        out.append(KindFigures(
            k.entry, k.count,
            over_starts(problem, weighted_lines(problem, k.lines_fp, offsets)) / n,
            over_starts(problem, weighted_lines(problem, k.dirty_fp, offsets)) / n,
            simple_bound(problem, k.lines_fp) / n, simple_bound(problem, k.dirty_fp) / n))
    return tuple(out)
