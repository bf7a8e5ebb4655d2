"""Exact branch-and-bound for objects that may start anywhere in a line (granule relaxation).

With granules of g = object_align bytes and K = line / g start offsets, a footprint's lines
summed over the starts equal K for its first touched granule plus, per further touched
granule, the distance to the previous one capped at K (`line_cost.footprint_lines_total`).
So only *which granules* each footprint touches matters.

The relaxation solved here (docs/layout.md, "Exact search for unaligned objects"): the hot
units are placed at any non-overlapping offsets that are multiples of their alignments,
after the fixed area; cold units, the size limit and the caller's rules (pins, chains,
sides, `first`) are dropped. Every C layout the optimizer may return is such a placement
with the same cost, so the optimum here is a lower bound, and a C layout that reaches it
is optimal. Within the relaxation, without loss of optimality:

* no granule between two hot units is empty (removing one shifts what follows by g bytes,
  which keeps every alignment and only shortens distances: no cost grows);
* a unit starts at the first aligned offset after the previous unit, either in the
  granule where that unit ended or at the next granule boundary (moving it back inside
  its granule touches a subset of the granules);
* hot units that fill whole granules (alignment g, size a multiple of g) and have the
  same footprints, lines and dirty, are one block (exchange argument: moving one next to
  the other or the other next to the one changes each footprint's capped distances by
  opposite amounts, and the capped distance is concave, so one of the two moves never
  costs more).

The search places units left to right, with a dominance table on (units left, cursor
within its granule, per footprint the capped distance to its last granule), the
per-footprint bound on what is left and a next-granule penalty, in C (`block_native`, built
at install time): best-first (the first complete layout is the optimum, and when the budget
ends the smallest bound still queued is proven) and threshold searches. Lines first; then,
when the known layout's lines are proven, lines * M + dirty with M above any dirty total.
The budget is a count of nodes (deterministic: no clock is read). This module builds the
search's item types, footprints and bounds and runs the phases; it neither orders cold
units nor checks the caller's constraints: the caller's `judge` realises the relaxed
layouts as C orders and measures them.

Cache-aligned objects (one start, g = the line: `natural`) are searched differently: the
free gaps of the relaxation are not free in C (cold fields must fill them), so there every
unit outside the fixed area is a piece, cold ones too, and each starts where C puts it
after the previous one; the search is then over the declaration orders themselves (the
size limit and the caller's rules aside), and a caller's lower bound on the lines (the
line models') is asked first (docs/layout.md, "Cache-aligned objects: the search over
declaration orders").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cachefit.layout import block_native
from cachefit.layout.block_native import BestFirstOutcome
from cachefit.layout.problem import LayoutProblem, align_up


@dataclass(frozen=True)
class ItemType:
    """Interchangeable hot pieces: same size, alignment and footprints."""

    size: int
    align: int
    mask: int                       # bit i: footprint i (lines first, then dirty)
    units: tuple[tuple[int, ...], ...]   # per copy, the units it stands for (a block: several)


@dataclass(frozen=True)
class BlockSearchResult:
    """Outcome of `block_search` (totals as in `line_cost.weighted_totals`).

    `lines_bound`: every C layout touches at least this many lines (weighted, summed over
    the starts); `lines_exact`: it is the relaxation's optimum. `dirty_bound`: every C
    layout with `lines_bound` lines has at least this many dirty lines (None: not proven).
    `found`: relaxed layouts better than the upper bound, as hot-unit target offsets.
    (Best-first, a dirty search cut by the budget still gives the bound its queue proves;
    `dirty_exact`: the dirty search ended, so `dirty_bound` is the least dirty total.)"""

    lines_bound: int
    lines_exact: bool
    dirty_bound: int | None
    found: tuple[dict[int, int], ...]
    nodes: int
    lines_nodes: int
    item_types: int
    pieces: int
    dirty_exact: bool = False


def applicable(problem: LayoutProblem) -> bool:
    """The relaxation needs several start offsets, equally likely (not an observed
    distribution of starts, issue 26), no hot unit aligned above a granule and no fixed
    hot unit (a unit in the fixed area would lie before where the search starts).
    Cache-aligned objects (`natural`) need every fixed unit in the fixed area instead."""
    if problem.start_weights:
        return False
    g = problem.object_align
    if natural(problem):
        return bool(problem.hot) and all(
            u.align <= g and (not u.fixed or u.offset < problem.prefix_end)
            for u in problem.units)
    return (len(problem.starts) > 1 and g < problem.line and bool(problem.hot)
            and all(problem.units[u].align <= g and not problem.units[u].fixed
                    for u in problem.hot))


def natural(problem: LayoutProblem) -> bool:
    """Cache-aligned objects (one start, granule = line): the search places every unit,
    cold ones too, where C would put it after the previous one, so it searches the
    declaration orders themselves (rules and the size limit aside), not the relaxation
    with free gaps (docs/layout.md, "Cache-aligned objects")."""
    return problem.starts == (0,) and problem.object_align == problem.line


def item_types(problem: LayoutProblem, dirty: bool = True, merge: bool = True,
               free_gaps: bool = False) -> tuple[list[ItemType], list[tuple[int, int, int]]]:
    """Hot units (with `natural(problem)` and not `free_gaps`, every unit outside the fixed
    area) grouped into item types (blocks of whole-granule hot units merged unless not
    `merge`), and the footprints as (weight in the scalar objective, index, is_dirty)
    lists (without the dirty footprints unless `dirty`)."""
    g = problem.object_align
    fps = list(problem.lines_fp) + (list(problem.dirty_fp) if dirty else [])
    nl = len(problem.lines_fp)
    sig: dict[int, int] = {}
    for i, fp in enumerate(fps):
        for u in fp.units:
            sig[u] = sig.get(u, 0) | (1 << i)
    placed = (u.index for u in problem.units if not u.fixed) \
        if natural(problem) and not free_gaps else iter(problem.hot)
    hot = sorted((u for u in placed if problem.units[u].size > 0),
                 key=lambda u: (problem.units[u].offset, u))
    blocks: dict[int, list[int]] = {}
    loose: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}
    for u in hot:
        unit = problem.units[u]
        if merge and unit.align == g and unit.size % g == 0 and sig.get(u):
            blocks.setdefault(sig[u], []).append(u)
        else:
            loose.setdefault((unit.size, unit.align, sig.get(u, 0)), []).append((u,))
    for mask, members in blocks.items():
        size = sum(problem.units[u].size for u in members)
        loose.setdefault((size, g, mask), []).append(tuple(members))
    types = [ItemType(size, align, mask, tuple(copies))
             for (size, align, mask), copies in sorted(loose.items())]
    # M above any dirty total: without empty granules the hot units and the fixed area
    # span at most this many granules, and a footprint's total is at most K + that.
    span = problem.prefix_end // g + 1 + sum(problem.units[u].size // g + 2 for u in hot)
    dirty_scale = 1 if not dirty else sum(fp.weight for fp in problem.dirty_fp) * \
        (problem.line // g + span) + 1
    weights = [(fp.weight * dirty_scale if i < nl else fp.weight, i, int(i >= nl))
               for i, fp in enumerate(fps)]
    return types, weights


Judge = Callable[[dict[int, int]], "tuple[int, int] | None"]
"""Realises relaxed target offsets as a C layout and returns its (lines, dirty) totals
(None when no valid layout results)."""


def block_search(problem: LayoutProblem, *, upper: tuple[int, int], max_nodes: int,
                 judge: Judge | None = None, merge: bool = True,
                 lower: int = 0, lower_dirty: int = 0, free_gaps: bool = False,
                 dirty: bool = True,
                 plans: tuple[tuple[int, int, float | None], ...] | None = None,
                 threshold_share: float | None = None) -> BlockSearchResult:
    """Lower bounds (and better layouts) from the granule relaxation of `problem` (for
    cache-aligned objects, `natural`: from the search over declaration orders).

    `upper`: (lines, dirty) totals of a known C layout. Lines first: threshold searches,
    then best-first (states expanded by increasing bound, so the first complete relaxed
    layout is the relaxation's optimum, and when the budget ends the smallest bound still
    queued is proven). `judge` turns relaxed layouts into C layouts (a better C layout
    lowers the upper bound). When the lines of the upper bound are proven optimal, a
    second search over (lines, dirty) proves its dirty lines or finds better ones (or, out
    of budget, proves the bound still queued). At most `max_nodes` nodes in all, and
    DIRTY_EXTRA_SHARE of that more for the dirty search once the lines are proven
    (deterministic). `merge` False searches whole-granule units one by one (for tests).
    A search whose numbers the C form cannot hold (`block_native.fits`) is not run: the
    lines bound is then the root's, the dirty bound none. `lower`: the caller's proven
    lower bound on the lines of every C layout (0: none), from another relaxation (the
    line models, for cache-aligned objects); the lines search asks it first, and a layout
    there is optimal. `lower_dirty`: the caller's proven lower bound on the dirty lines of
    the layouts with `lower` lines (the dirty search ends at a layout there; it does not
    ask it first). `free_gaps`: search the relaxation even for cache-aligned objects (with
    `lower` at least the best layout's lines, for its dirty search: docs/layout.md, "Dirty
    lines of cache-aligned objects"). `dirty` False: the lines search only (no dirty
    bound). `plans`: the threshold lines searches to try instead of THRESHOLD_PLANS,
    `threshold_share` their share of the budget instead of THRESHOLD_LINES_SHARE."""
    counter = _Counter(max_nodes, 0.0 if natural(problem) else None)
    lines = _Search(problem, dirty=False, merge=merge, free_gaps=free_gaps)
    lines.known_lo = lower
    if plans is not None:
        lines.plans = plans
    if threshold_share is not None:
        lines.threshold_share = threshold_share
    scalar = _Search(problem, dirty=True, merge=merge, free_gaps=free_gaps)
    scalar.known_lo = lines.known_lo    # the oracle's lines search reads it from here
    scalar.known_dirty = lower_dirty
    if not block_native.fits(lines, upper[0]):
        return BlockSearchResult(max(lines.root_bound(), lower), False, None, (), 0, 0,
                                 len(lines.types), sum(len(t.units) for t in lines.types))
    scalar_fits = block_native.fits(scalar, upper[0] * scalar.scale + upper[1])
    oracle = _shared_oracle(lines, scalar, upper) if scalar_fits else None
    dirty = dirty and scalar_fits
    try:
        return _both_phases(lines, scalar, counter, upper, judge, oracle, dirty)
    finally:
        if oracle is not None:
            oracle.close()


def _shared_oracle(lines: _Search, scalar: _Search, upper: tuple[int, int]
                   ) -> block_native.LinesOracle | None:
    """The lines oracle of the dirty search, opened for the lines search to fill (docs/
    layout.md, "One oracle for both phases"), or None (SHARED_ORACLE off, the threshold
    searches off, or a projection it cannot build)."""
    if not (SHARED_ORACLE and THRESHOLD_DIRTY and lines.threshold_share > 0):
        return None
    oracle = block_native.LinesOracle(scalar, lines)
    return oracle if oracle.handle is not None else None


def _both_phases(lines: _Search, scalar: _Search, counter: _Counter, upper: tuple[int, int],
                 judge: Judge | None, oracle: block_native.LinesOracle | None,
                 dirty: bool = True) -> BlockSearchResult:
    """The lines phase, then (`dirty`) the dirty phase when the lines are proven."""
    found: list[dict[int, int]] = []
    best = upper
    lb = max(lines.root_bound(), lines.known_lo)
    exact = lb >= best[0]
    if not exact:
        out = _best_first(lines, best[0], counter, None, oracle=oracle)
        if out.path is not None and out.cost is not None:
            targets = lines.targets(list(out.path))
            found.append(targets)
            if out.complete:
                lb, exact = max(out.cost, lines.known_lo), True
            else:                           # the threshold search's last layout, cut
                lb = max(lb, out.bound)
            real = judge(targets) if judge is not None else None
            if real is not None and real < best:
                best = real
        elif out.complete:
            lb, exact = best[0], True
        else:
            lb = max(lb, out.bound)
    lines_nodes = counter.nodes
    dirty_bound: int | None = None
    dirty_exact = False
    known_dirty = scalar.known_dirty if lb == scalar.known_lo else 0
    if exact and best[0] == lb and 0 < best[1] <= known_dirty:
        dirty_bound, dirty_exact = best[1], True     # at the caller's bound already
    elif dirty and exact and best[0] == lb:
        counter.grant_dirty_extra()
        base = lb * scalar.scale
        out = _best_first(scalar, base + best[1], counter, (lb, scalar.scale),
                          lines.plan, oracle)
        if out.path is not None and out.cost is not None:
            targets = scalar.targets(list(out.path))
            found.append(targets)
            if out.complete:
                dirty_bound, dirty_exact = max(out.cost - base, known_dirty), True
            elif out.bound > base:          # the threshold search's last layout, cut
                dirty_bound = out.bound - base
            if judge is not None:
                judge(targets)
        elif out.complete:
            dirty_bound, dirty_exact = best[1], True
        elif out.bound > base:
            # every relaxed layout with lb lines has at least this many dirty lines
            dirty_bound = out.bound - base
    return BlockSearchResult(lb, exact, dirty_bound, tuple(found), counter.nodes, lines_nodes,
                             len(lines.types), sum(len(t.units) for t in lines.types),
                             dirty_exact)


def _best_first(search: _Search, limit: int, counter: _Counter,
                floor: tuple[int, int] | None,
                plan: tuple[int, int] | None = None,
                oracle: block_native.LinesOracle | None = None) -> BestFirstOutcome:
    """One search within `counter`'s budget (one node past it when cut). A lines search
    (no `floor`) asks threshold questions (`_threshold_lines`; cut, it may return a layout
    that is not proven); a dirty search asks threshold questions with the lines oracle,
    which may take the whole budget,
    and its groups bound the oracle: `plan`'s (groups, footprints per group) when given
    (the plan that proved the lines), else GROUPS'. `oracle`: the lines oracle both
    phases share (the lines search runs over it; the dirty search goes on with it)."""
    budget = counter.limit - counter.nodes
    if floor is None and search.threshold_share > 0:
        return _threshold_lines(search, limit, counter, oracle)
    groups, size, cap = GROUPS[floor is not None]
    if cap is None:
        cap = budget
    if floor is not None and THRESHOLD_DIRTY:
        if plan is not None:
            groups, size = plan
        out, _status = block_native.threshold(search, limit, budget, groups=groups,
                                              group_size=size,
                                              group_cap=cap, floor=floor,
                                              oracle_cap=budget, nest=NEST,
                                              oracle=oracle)
        counter.nodes += out.expanded + (0 if out.complete else 1)
        return out
    out, _status = block_native.best_first(search, limit, budget, floor,
                                           partial=PARTIAL[floor is not None],
                                           groups=groups, group_size=size, group_cap=cap,
                                           oracle_cap=budget if floor else 0)
    counter.nodes += out.expanded + (0 if out.complete else 1)
    return out


def _threshold_lines(search: _Search, limit: int, counter: _Counter,
                     oracle: block_native.LinesOracle | None = None) -> BestFirstOutcome:
    """The native lines search: threshold searches with `search.threshold_share` of the
    budget (THRESHOLD_LINES_SHARE by default), one per plan (`search.plans`,
    THRESHOLD_PLANS by default) while none is complete, each below the last layout found;
    then, if all are cut, the best-first search with the rest, below the last layout (its
    bound rises with every expansion, a threshold search's only with a proof). The outcome
    is complete when one proves the optimum (`search.plan` is then the plan that did);
    cut, it holds the last layout found (not proven) and the largest bound. With
    `oracle`, the threshold searches run over it and fill its memo for the dirty search
    (no mirror rule there)."""
    budget = counter.limit - counter.nodes
    share = int(budget * search.threshold_share)
    below, spent = limit, 0
    first = BestFirstOutcome(None, None, 0, False, 0, 0)
    for groups, size, part in search.plans:
        nodes = share - spent if part is None else min(share - spent, int(budget * part))
        if oracle is not None:
            out, _status = oracle.lines_search(below, nodes, groups, size,
                                               NEST, group_cap=budget)
        else:
            out, _status = block_native.threshold(search, below, nodes, groups=groups,
                                                  group_size=size, nest=NEST)
        counter.nodes += out.expanded
        spent += out.expanded
        first = _after(first, out)
        if first.complete:
            search.plan = (groups, size)
            return first
        below = first.cost if first.cost is not None else below
        if spent >= share:
            break
    if (oracle is not None and first.cost is not None
            and first.cost - first.bound <= first.cost * NEAR_GAP
            and counter.grant_dirty_extra()):
        # a near proof: the last plan goes on with the dirty search's extra (its memo kept)
        groups, size, _part = search.plans[-1]
        out, _status = oracle.lines_search(below, counter.limit - counter.nodes - int(
            budget * (1 - search.threshold_share)), groups, size, NEST,
            group_cap=budget)
        counter.nodes += out.expanded
        first = _after(first, out)
        if first.complete:
            search.plan = (groups, size)
            return first
    search.plan = search.plans[-1][:2]
    below = first.cost if first.cost is not None else limit
    groups, size, cap = GROUPS[0]
    out, _status = block_native.best_first(search, below, counter.limit - counter.nodes, None,
                                           partial=PARTIAL[0],
                                           groups=groups, group_size=size,
                                           group_cap=cap if cap is not None else counter.limit)
    counter.nodes += out.expanded + (0 if out.complete else 1)
    return _after(first, out)


def _after(first: BestFirstOutcome, out: BestFirstOutcome) -> BestFirstOutcome:
    """The lines search's outcome after a search `out` that ran below the layout of
    `first` (the outcome so far): complete when `out` is, with `first`'s layout when
    nothing was below it (that layout is then optimal); cut, the newer layout and the
    larger bound."""
    expanded, queued = first.expanded + out.expanded, max(first.queued, out.queued)
    if out.complete and out.path is None and first.path is not None:
        return BestFirstOutcome(first.cost, first.path, first.cost, True, expanded, queued)
    if out.complete:
        return BestFirstOutcome(out.cost, out.path, out.bound, True, expanded, queued)
    if out.path is not None:
        return BestFirstOutcome(out.cost, out.path, max(first.bound, out.bound), False,
                                expanded, queued)
    return BestFirstOutcome(first.cost, first.path, max(first.bound, out.bound), False,
                            expanded, queued)


DIRTY_EXTRA_SHARE = 0.5
"""Once the lines are proven, the dirty search gets what the lines search left of the
budget plus this share of the whole budget (none for cache-aligned objects, `natural`)."""
THRESHOLD_DIRTY = True
"""The native dirty search asks threshold questions (`block_native.threshold` with the
lines oracle) instead of searching best-first. Cut, it proves no dirty bound."""

PARTIAL = (True, False)
"""Native search with partial expansion (`block_native.best_first`) for the lines search
and for the dirty search."""

THRESHOLD_LINES_SHARE = 0.75
"""Share of the lines search's budget for the native threshold search (docs/layout.md,
"Threshold lines search"); the best-first search gets the rest if it is cut. 0:
best-first only."""

THRESHOLD_PLANS: tuple[tuple[int, int, float | None], ...] = ((1, 6, 0.25), (1, 8, None))
"""The threshold lines searches tried in turn while none is complete (`_threshold_lines`):
groups, footprints per group, share of the lines budget (None: what is left of
THRESHOLD_LINES_SHARE)."""

NEST = 3
"""Nested groups (`block_native.threshold`'s `nest`): a threshold group of at least NEST
footprints is bounded by a group of its heaviest half, and so on down; 0: none."""

NEAR_GAP = 0.08
"""A lines search over the shared oracle whose plans end cut with their best layout within
this share of their proven bound goes on with the dirty search's extra budget
(DIRTY_EXTRA_SHARE, granted once)."""

SHARED_ORACLE = True
"""One lines oracle for both phases of the native search (`block_native.LinesOracle`):
the threshold lines search runs over the dirty search's oracle, whose memo the dirty
search then goes on with instead of proving the least lines again."""

GROUPS: tuple[tuple[int, int, int | None], ...] = ((1, 3, 500_000), (2, 3, None))
"""Group bounds of the native best-first searches (groups, footprints per group, programme
states a group may expand before it is dropped, None: the whole budget): exact values in
the lines search, and in the dirty search the lines oracle's groups, asked by threshold."""


class _Counter:
    def __init__(self, limit: int, extra_share: float | None = None) -> None:
        self.limit = limit
        self.budget = limit               # as given: the base of the dirty search's extra
        self.extra_share = extra_share    # None: DIRTY_EXTRA_SHARE when granted
        self.nodes = 0
        self.granted = False

    def grant_dirty_extra(self) -> bool:
        """DIRTY_EXTRA_SHARE of the budget more, once: for the dirty search when the lines
        are proven, or earlier for a lines proof that is near (`_threshold_lines`). False
        when it was granted before."""
        if self.granted:
            return False
        self.granted = True
        share = DIRTY_EXTRA_SHARE if self.extra_share is None else self.extra_share
        self.limit += int(self.budget * share)
        return True


class _Search:
    """The relaxation as the native search takes it (item types, footprints, weights, the
    fixed area, the root's bound), objective lines (and dirty when `dirty`)."""

    def __init__(self, problem: LayoutProblem, *, dirty: bool, merge: bool = True,
                 free_gaps: bool = False) -> None:
        self.p = problem
        self.g = problem.object_align
        self.k = problem.line // self.g
        self.free_gaps = free_gaps
        self.natural = natural(problem) and not free_gaps
        # the caller's proven lower bounds (0: none): on the least lines; on the dirty
        # lines of the layouts with that many lines
        self.known_lo = 0
        self.known_dirty = 0
        self.types, weights = item_types(problem, dirty, merge, free_gaps)
        self.nfp = len(weights)
        self.weight = [w for w, _i, _d in weights]
        self.scale = weights[0][0] // problem.lines_fp[0].weight if problem.lines_fp else 1
        self.penalties: dict[tuple[int, int, int, tuple[int, ...]], int] = {}
        self.bit_lists: dict[int, tuple[int, ...]] = {}
        self.fidx = [tuple(i for i in range(self.nfp) if t.mask >> i & 1) for t in self.types]
        self.type_bytes = [[t.size if t.mask >> i & 1 else 0 for i in range(self.nfp)]
                           for t in self.types]
        # the fixed area: its spans' cost, and each footprint's distance from them
        fps = list(problem.lines_fp) + (list(problem.dirty_fp) if dirty else [])
        g, k = self.g, self.k
        self.start = problem.prefix_end
        g0 = self.start // g
        self.fixed_cost = 0
        ages = [k] * self.nfp
        for i, fp in enumerate(fps):
            grans: set[int] = set()
            for b, e in fp.fixed:
                grans.update(range(b // g, (e - 1) // g + 1))
            if grans:
                ordered = sorted(grans)
                cov = k + sum(min(y - x, k) for x, y in zip(ordered, ordered[1:], strict=False))
                self.fixed_cost += self.weight[i] * cov
                ages[i] = min(g0 - ordered[-1], k)
        self.ages0 = tuple(ages)
        self.counts0 = tuple(len(t.units) for t in self.types)
        self.mirror = self._mirror_pair(problem)
        self.plan: tuple[int, int] | None = None   # the threshold plan that proved the lines
        self.plans = THRESHOLD_PLANS                # the threshold plans the lines search tries
        self.threshold_share = THRESHOLD_LINES_SHARE   # and their share of its budget
        self.left0 = [sum(self.type_bytes[t][i] * self.counts0[t]
                          for t in range(len(self.types))) for i in range(self.nfp)]

    def _mirror_pair(self, problem: LayoutProblem) -> tuple[int, int] | None:
        """Two single pieces (p, q) such that only layouts with p before q need searching,
        or None. Mirroring a relaxed layout (offset o of a piece of size s becomes
        T - o - s, T a multiple of g) keeps every alignment when each size is a multiple
        of its alignment, and keeps every footprint's granule distances, so its cost; it
        reverses the order of the pieces, and the normal form keeps that order. It needs
        no fixed spans and a start on a granule boundary; and not `natural` (the mirror
        of a C layout need not be one)."""
        if self.natural or problem.prefix_end % self.g or any(
                fp.fixed for fp in problem.lines_fp + problem.dirty_fp) or any(
                problem.units[u].size % problem.units[u].align for u in problem.hot):
            return None
        single = [ti for ti, t in enumerate(self.types) if len(t.units) == 1]
        if len(single) < 2:
            return None
        alone = [ti for ti in single if self._alone_in_lines(ti)]
        if len(alone) >= 2:
            # pieces of their own in the lines oracle's projection: it can keep the pair too
            single = alone
        heavy = sorted(single, key=lambda ti: (-sum(
            self.weight[i] for i in range(self.nfp) if self.types[ti].mask >> i & 1), ti))
        return heavy[1], heavy[0]

    def _alone_in_lines(self, ti: int) -> bool:
        """Type ti (one piece) is the only piece of its type in the lines oracle's projection:
        no other piece has its size, alignment and lines footprints, or, filling whole
        granules, its lines footprints (the oracle's classes). Always so in a lines search."""
        nl = len(self.p.lines_fp)
        t = self.types[ti]
        whole = t.align == self.g and t.size % self.g == 0
        mask = t.mask & ((1 << nl) - 1)
        same = sum(len(u.units) for u in self.types if u.mask & ((1 << nl) - 1) == mask and (
            (u.align == self.g and u.size % self.g == 0) if whole
            else (u.size, u.align) == (t.size, t.align)))
        return same == 1

    def encodable(self) -> bool:
        """States fit in bytes (counts, cursor and distances below 256), as the native
        search stores them."""
        return self.g < 256 and self.k < 256 and all(c < 256 for c in self.counts0)

    def root_bound(self) -> int:
        return self.fixed_cost + self.lower_bound(self.left0, self.ages0, self.start % self.g,
                                                  self.counts0)

    def lower_bound(self, left: list[int], ages: tuple[int, ...], cmod: int,
                    counts: tuple[int, ...]) -> int:
        """Per footprint with bytes left: the capped distance to its next granule plus one
        per further granule its bytes need (a footprint in the current granule may use
        the room left there for free); plus the open footprints the next granule cannot
        serve (`_next_granule_penalty`)."""
        total, open_mask = self.base_bound(left, ages, cmod)
        if open_mask:
            total += self._next_granule_penalty(open_mask, cmod, counts, ages)
        return total

    def base_bound(self, left: list[int], ages: tuple[int, ...] | bytes, cmod: int
                   ) -> tuple[int, int]:
        """`lower_bound` without the next-granule penalty, and the footprints it would
        charge (touched at distance 1 to K-1, bytes left) as a mask."""
        g, k = self.g, self.k
        room = g - cmod if cmod else 0
        total = 0
        open_mask = 0
        weight = self.weight
        for i in range(self.nfp):
            b = left[i]
            if not b:
                continue
            a = ages[i]
            if a == 0:
                if b > room:
                    total += weight[i] * ((b - room + g - 1) // g)
            else:
                total += weight[i] * (a + (b + g - 1) // g - 1)
                if a < k:
                    open_mask |= 1 << i
        return total, open_mask

    def _next_granule_penalty(self, open_mask: int, cmod: int, counts: tuple[int, ...],
                              ages: tuple[int, ...]) -> int:
        """What footprints touched a little earlier (distance 1 to K-1, bytes left) pay
        beyond the per-footprint bound, which has them continue in the next granule.
        At a granule boundary the next granule holds either the start of one piece of
        alignment g and size >= g, alone in the size // g granules it fills, so every
        footprint it misses continues that much later; or only pieces that can share a
        granule (smaller or less aligned), so the footprints none of them holds continue
        at least one granule later. Inside a granule, a footprint continues in the rest
        of it only through a piece that starts there."""
        avail = 0
        for ti, c in enumerate(counts):
            if c:
                avail |= 1 << ti
        key = (open_mask, cmod, avail, tuple(ages[i] for i in self._bits(open_mask)))
        got = self.penalties.get(key)
        if got is not None:
            return got
        g, k = self.g, self.k
        share = 0
        best: int | None = None
        has_share = False
        for ti, t in enumerate(self.types):
            if not avail >> ti & 1:
                continue
            if cmod:
                if align_up(cmod, t.align) < g:
                    share |= t.mask
                    has_share = True
            elif t.align >= g and t.size >= g:
                wait = t.size // g
                cost = 0
                for i in self._bits(open_mask & ~t.mask):
                    a = ages[i]
                    cost += self.weight[i] * ((a + wait if a + wait < k else k) - a)
                if best is None or cost < best:
                    best = cost
            else:
                share |= t.mask
                has_share = True
        if has_share or cmod:
            rest = self._weight_of(open_mask & ~share)
            if best is None or rest < best:
                best = rest
        self.penalties[key] = best or 0
        return best or 0

    def _bits(self, mask: int) -> tuple[int, ...]:
        got = self.bit_lists.get(mask)
        if got is None:
            got = tuple(i for i in range(mask.bit_length()) if mask >> i & 1)
            self.bit_lists[mask] = got
        return got

    def _weight_of(self, mask: int) -> int:
        total = 0
        i = 0
        while mask:
            if mask & 1:
                total += self.weight[i]
            mask >>= 1
            i += 1
        return total

    def targets(self, path: list[tuple[int, int]]) -> dict[int, int]:
        """Offsets of the hot units (`natural`: of all units placed) for a path of (item
        type, start in the granule)."""
        g = self.g
        used = [0] * len(self.types)
        out: dict[int, int] = {}
        cursor = self.start
        for ti, o in path:
            t = self.types[ti]
            at = cursor - cursor % g + o if cursor % g else cursor
            units = t.units[used[ti]]
            used[ti] += 1
            for u in units:
                at = align_up(at, self.p.units[u].align)
                out[u] = at
                at += self.p.units[u].size
            cursor = at
        return out
