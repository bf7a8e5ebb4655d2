"""The layout optimizer behind `cachefit reorder`: choose a member order for one record.

`optimize_layout` builds the problem (units, constraints, footprints, the object starts:
by default where the profile saw the objects, issue 26), collects candidate orders and
keeps the best valid one by (lines, dirty lines, size, order changes of cold fields, then
of hot fields). Objects seen at one offset s != 0 of a line are solved as cache-aligned
objects behind s untouched bytes (`start_shift`, exact), so everything below for
cache-aligned objects applies to them; other observed distributions have only the
heuristics and the exact model (which weighs each start):

* the original order (valid whenever the caller's constraints describe the source);
* line clustering + local search over lines, realised by cold fill (fast, any size);
* for cache-aligned objects, the CP-SAT line-assignment relaxations: fields with the same
  footprints as one fluid class (a lower bound, usually proven), then one item per unit
  (targets realised by cold fill, and a bound); for other objects the same models of the
  record as if it were cache-aligned, only as starting points;
* local search on complete orders from the best candidate;
* if optimality is still unproven and the record has at most EXACT_MAX_UNITS units, the
  exact CP-SAT circuit model, hinted with the best order.

That is the core. The proving step (`prove`, on by default, within the same budget) adds,
where nothing is proven yet: the tight class model (when the class model's optimum cannot
be arranged into a C order), the line-filling model of all units and the unit model with
its lines in any order (`line_fill_model`: a bound, and orders of exactly its cost, told
the earlier models' lines and dirty bounds so that it stops on reaching them), and
block_search, an exact branch-and-bound over the granule relaxation (a lower bound; its
layouts become candidates; node budget). They mostly prove what the core found, and
sometimes find a better layout (docs/layout.md, "The proving step").

The lower bound is the best of the per-footprint bound, the CP-SAT bounds and
block_search's bound.

`evaluate_order` measures any given order the same way (for tests and comparisons such
as alphabetical order). Nothing here prints; bad input raises `UserError`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cachefit.errors import UserError
from cachefit.layout.block_search import (
    BlockSearchResult,
    applicable,
    block_search,
    natural,
)
from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.cpsat_model import LayoutModel, StageOutcome
from cachefit.layout.line_arrangement import arrange_lines, lines_interchangeable, respread
from cachefit.layout.line_clustering import cluster_targets
from cachefit.layout.line_cost import (
    CostTotals,
    cost_totals,
    kind_figures,
    line_figures,
    per_invocation,
    simple_bound,
)
from cachefit.layout.line_fill_model import applicable as fill_applicable
from cachefit.layout.line_fill_model import fill_orders
from cachefit.layout.line_model import LineModel
from cachefit.layout.order_search import improve_order
from cachefit.layout.placement import (
    Placement,
    bitfield_barriers,
    inversions,
    original_placement,
    place_order,
    violations,
)
from cachefit.layout.problem import LayoutProblem, build_problem
from cachefit.layout.realize import compact_tail, realize
from cachefit.layout.result import LayoutEvaluation, LayoutResult
from cachefit.layout.sharing import has_handoffs, search_sharing
from cachefit.layout.start_shift import shifted_view
from cachefit.model.profile import TypeProfile
from cachefit.model.project_config import SHARING_WEIGHT
from cachefit.model.record_layout import Record

EXACT_MAX_UNITS = 32
"""Records with at most this many units get the exact circuit model over all units
(when the fast methods have not already proven optimality)."""
EXACT_MAX_LINES = 64
"""The exact model also needs the record to span at most this many lines (its coverage
literals grow with the lines a unit may cover)."""
LINE_MODEL_MAX_HOT = 200
"""Larger records of cache-aligned objects get the line model up to this many hot units."""
DET_PER_SECOND = 0.3
"""CP-SAT deterministic time granted per second of `time_limit`."""
WORK_PER_SECOND = 500_000
"""Order-search work (units placed + footprint members measured) per second of
`time_limit`."""
EXACT_SHARE = 0.9
"""Share of the CP-SAT budget for the exact circuit model (small records, not proven by the
earlier methods)."""
TIE_BREAK_SHARE = 0.25
"""Share of the CP-SAT budget for the size/order stages once lines and dirty are proven."""
EVALS_PER_HOT_UNIT = 1_500
"""Cap on order-search evaluations per hot unit (more does not help small records)."""
MOVES_PER_SECOND = 40_000
"""Line-clustering move evaluations per second of `time_limit`."""
FILL_SHARE = 0.0
"""Share of the per-unit line model's CP-SAT budget left to the line-filling model (H4),
which runs after it when it applies and nothing is proven yet (then also with what the
unit model left and FILL_EXTRA)."""
LINE_MODELS_SHARE = 0.8
"""Share of the CP-SAT budget for the line models of a cache-aligned record (not small)."""
CLASS_SHARE = 0.75
"""Share of the line models' budget for the class model (the unit models get the rest)."""
RESUME_SHARE = 1.2
"""When the class model's lines are proven and its dirty stage is cut short, that stage
goes on (`LineModel.resume_dirty`) with this share of the line models' budget more, on
records of at most LARGE_UNITS units."""
TIGHT_SHARE = 0.5
"""Share of what the class model left for the tight class model (`LineModel(tight=True)`),
which runs only when the class model's optimum cannot be arranged into a C order."""
CLASS_SHARE_AS_IF_ALIGNED = 0.5
"""CLASS_SHARE for the line models of a record whose objects may start inside a line, run
as if it were cache-aligned for starting points."""
ANY_ORDER_SHARE = 1.0
"""Share of FILL_EXTRA's budget for the unit line model with its lines in any order
(`LineModel(problem)`), run after the contiguous unit model on records the line filling
takes, when nothing is proven; the line filling gets what is left."""
RESPREAD_DET = 0.2
"""CP-SAT deterministic seconds for sharing a class model solution out among its units
again (line_arrangement.respread), per solution."""
FILL_EXTRA = 0.25
"""The line-filling model's further budget, as a share of the line models' (the share the
exact model gets for small records; the line-filling model runs only on larger ones)."""
# --- block search (H5): objects that may start inside a line ---
NODES_PER_SECOND = 440_000
"""block_search nodes per second of `time_limit`."""
BLOCK_SHARE = 0.55
"""Share of `time_limit` (as nodes) for block_search on records too large for the exact
model."""
ORDER_SHARE_BEFORE_BLOCK = 0.25
"""Share of the order search's evaluations spent before block search on the records it may
prove (the rest runs after it, only if it proves nothing); such records also skip the
as-if-aligned line models."""
BLOCK_SHARE_SMALL = 0.25
"""Share of `time_limit` for block_search before the exact circuit model."""
BLOCK_SHARE_LARGE = 0.3
"""BLOCK_SHARE for records of more than LARGE_UNITS units."""
LARGE_UNITS = 128
"""Units above which a record is large: block search gets BLOCK_SHARE_LARGE, and the class
model's dirty stage does not go on (RESUME_SHARE)."""
BLOCK_MAX_HOT = 64
"""block_search only for records with at most this many hot units."""
NATURAL_BLOCK_SHARE = 0.45
"""Cache-aligned records (`natural`): the share of `time_limit` (as nodes) for their block
searches in all, shared in turn by the three below."""
FREE_GAPS_FIRST = 0.25
"""Cache-aligned records above the line models' lines bound: the share of their block
budget for the lines search of the relaxation with free gaps, which runs first; the
search over declaration orders gets what it leaves, and the relaxation's dirty search
what that leaves."""
FREE_GAPS_DIRTY_ONLY = 0.5
"""Cache-aligned records whose best layout is at the line models' lines bound already: the
share of their block budget for the relaxation's dirty search, the only one that runs."""
FREE_GAPS_PLANS: tuple[tuple[int, int, float | None], ...] = ((1, 6, None),)
"""The relaxation's threshold lines plans there (as block_search.THRESHOLD_PLANS), over
all of its budget."""
NATURAL_PLANS: tuple[tuple[int, int, float | None], ...] = ((1, 8, None),)
"""The threshold lines plans of the search over declaration orders, over all of its
budget."""
NATURAL_COLD_PER_HOT = 1.0
"""Cache-aligned records get block_search over declaration orders (`natural`) only with at
most this many cold units per hot one (every cold unit is a piece there)."""


@dataclass(frozen=True)
class _Candidate:
    method: str
    placement: Placement
    cost: CostTotals
    key: tuple[int, ...]


class _Candidates:
    def __init__(self, problem: LayoutProblem) -> None:
        self.p = problem
        self.items: list[_Candidate] = []
        self.rejected: list[str] = []

    def add(self, order: Sequence[int], method: str) -> _Candidate | None:
        order = compact_tail(self.p, list(order))
        placement = place_order(self.p, order)
        bad = violations(self.p, placement)
        if bad:
            self.rejected.append(f"{method}: {bad[0]}")
            return None
        cost = cost_totals(self.p, placement.offsets, self.p.lines_fp, self.p.dirty_fp)
        cold_inv, hot_inv = inversions(self.p, order)
        key = (cost.lines, cost.dirty, placement.size, cold_inv, hot_inv)
        cand = _Candidate(method, placement, cost, key)
        self.items.append(cand)
        return cand

    def best(self) -> _Candidate | None:
        return min(self.items, key=lambda c: c.key, default=None)


def _field_offsets(problem: LayoutProblem, placement: Placement
                   ) -> tuple[tuple[str, ...], dict[str, int], dict[str, int]]:
    """Field order, predicted byte offsets and bit offsets (bit-fields) for `placement`."""
    order: list[str] = []
    offsets: dict[str, int] = {}
    bits: dict[str, int] = {}
    by_name = {f.name: f for f in problem.record.fields}
    for u in placement.order:
        unit = problem.units[u]
        at = placement.offsets[u]
        for name, rel in zip(unit.fields, unit.rel, strict=True):
            order.append(name)
            offsets[name] = at + rel
            f = by_name[name]
            if f.bit_offset is not None and f.is_bitfield:
                bits[name] = f.bit_offset + 8 * (at - unit.offset)
    if problem.fam is not None:
        order.append(problem.fam.name)
        offsets[problem.fam.name] = placement.fam_offset or 0
    return tuple(order), offsets, bits


_BARRIER_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
                  8: "unsigned long long"}


def _barriers(problem: LayoutProblem, placement: Placement) -> dict[str, str]:
    """Field -> type of the unnamed zero-width bit-field the source needs before it: the
    type of one of the unit's own bit-fields with the unit's alignment (so it is a type the
    code already uses for bit-fields), else an unsigned type of that alignment."""
    by_name = {f.name: f for f in problem.record.fields}
    out: dict[str, str] = {}
    for u in bitfield_barriers(problem, placement):
        unit = problem.units[u]
        spelling = _BARRIER_TYPES.get(unit.align, "unsigned int")
        for name in unit.fields:
            f = by_name[name]
            t = f.type.strip()
            # `_Bool`/`bool` too: a `_Bool : 0` is clean under -Wpedantic in C and C++.
            if f.is_bitfield and f.align == unit.align and not t.startswith("enum "):
                spelling = t
                break
        out[unit.fields[0]] = spelling
    return out


def _original_order(problem: LayoutProblem) -> list[int]:
    return sorted(problem.movable, key=lambda u: (problem.units[u].offset, u))


def optimize_layout(record: Record, profile_type: TypeProfile, *, cache_line: int = 64,
                    object_align: int | None = None, relax_align: bool = False,
                    constraints: LayoutConstraints = LayoutConstraints(),  # noqa: B008
                    allow_growth: bool = False, time_limit: float = 10.0,
                    merge: bool = False,
                    entry_weights: Mapping[str, float] | None = None,
                    prove: bool = True,
                    sharing_weight: float = SHARING_WEIGHT) -> LayoutResult:
    """Choose a member order for `record` from one type of a cachefit profile.

    Objectives, in order: weighted cache lines touched per (sequence, role) — a sequence
    or summary weighs its count, unless `entry_weights` weighs its kind of operation
    (problem.weigh_sequences); dirty lines; size (never above the original rounded up to
    whole lines unless `allow_growth`); cold fields then hot fields in their original
    relative order. `time_limit` sizes the budgets (counts, not the clock: the same input
    gives the same layout on any machine). `prove` False: the core only, without the
    proving step (see the module docstring). A type whose profile records lines changing
    hands between threads then gets the sharing search (layout.sharing: lines +
    `sharing_weight` * transfers per operation, padding allowed); other types are not
    affected by it. See docs/layout.md.
    """
    began = time.monotonic()
    if time_limit <= 0:
        raise UserError(f"time limit {time_limit} must be positive")
    if not sharing_weight >= 0:
        raise UserError(f"sharing weight {sharing_weight} must be a number >= 0")
    problem = build_problem(record, profile_type, cache_line=cache_line,
                            object_align=object_align, relax_align=relax_align,
                            constraints=constraints, allow_growth=allow_growth, merge=merge,
                            entry_weights=entry_weights)
    warnings = list(problem.warnings)
    # Objects observed at one offset s != 0 of a line: solved as cache-aligned objects
    # behind s untouched bytes (start_shift; the same cost for every order).
    shifted = shifted_view(problem)
    solved = shifted[0] if shifted is not None else problem
    cands = _Candidates(solved)
    original = _original_order(problem)
    reproduced = place_order(problem, original, natural=True)
    if reproduced.offsets != original_placement(problem).offsets:
        warnings.append("the C placement model does not reproduce the current layout "
                        "(packed or explicitly aligned members?); predicted offsets may "
                        "differ from the compiler's")
    cands.add(original, "original")
    if not problem.hot:
        warnings.append(f"the profile touches no field of {record.name}; only padding "
                        "can be reduced")
    stages: list[list[StageOutcome]] = []
    if problem.units and problem.hot:
        stages = _search(solved, cands, time_limit, prove)
    chosen = cands.best()
    if chosen is None:
        raise UserError(f"no layout of {record.name} satisfies the constraints",
                        "; ".join(cands.rejected[:3]) or "check the constraints")
    if shifted is not None:
        real = _Candidates(problem).add(chosen.placement.order, chosen.method)
        assert real is not None and real.cost == chosen.cost, "start_shift is not exact"
        chosen = real
    shared = None
    if has_handoffs(profile_type):      # issue 30: the sharing term (docs/layout.md)
        shared = search_sharing(problem, profile_type, chosen.placement,
                                original_placement(problem), weight=sharing_weight,
                                max_size=constraints.max_size, time_limit=time_limit)
        if shared.improved:
            moved = shared.placement
            chosen = _Candidate(chosen.method + " + sharing search", moved, shared.cost,
                                (shared.cost.lines, shared.cost.dirty, moved.size,
                                 *inversions(problem, moved.order)))
    result = _result(problem, chosen, stages, warnings, time.monotonic() - began)
    if shared is not None:
        result = replace(result, padding=shared.padding,
                         transfers_before=shared.transfers_before,
                         transfers_after=shared.transfers_after,
                         padding_gains=shared.padding_gains)
    return result


def _search(problem: LayoutProblem, cands: _Candidates, time_limit: float, prove: bool
            ) -> list[list[StageOutcome]]:
    """Add the solvers' candidates; return the CP-SAT stage outcomes of each model run
    (for bounds).

    Fast methods first (line clustering; the line model for cache-aligned objects; order
    search); if optimality is not proven by then and the record is small enough, the exact
    circuit model, hinted with the best order so far. Every budget is derived from
    `time_limit` as a count (CP-SAT deterministic time, evaluations, nodes) and no clock
    is read, so the same input gives the same layout on any machine load."""
    det_total = time_limit * DET_PER_SECOND
    small = len(problem.units) <= EXACT_MAX_UNITS and \
        problem.size_limit <= EXACT_MAX_LINES * problem.line
    aligned = problem.starts == (0,)
    line_model = aligned and len(problem.hot) <= LINE_MODEL_MAX_HOT
    targets = cluster_targets(problem, max_evals=int(MOVES_PER_SECOND * time_limit
                                                     * (0.02 if small else 0.1 if line_model
                                                        else 0.2)))
    cands.add(realize(problem, targets), "line clustering")
    stages: list[list[StageOutcome]] = []
    best = cands.best()
    search_share = 0.1 if small else 0.7
    # Records block search can prove (objects that may start inside a line, not small):
    # it finds its own layouts, so the order search runs mostly after it, and only if it
    # proves nothing (ORDER_SHARE_BEFORE_BLOCK).
    searchable = prove and len(problem.hot) <= BLOCK_MAX_HOT and applicable(problem) and not (
        natural(problem) and len(problem.units) - len(problem.hot)
        > NATURAL_COLD_PER_HOT * len(problem.hot))
    block = not small and searchable
    if line_model:
        stages += _line_models(problem, cands,
                               det_total * (0.15 if small else LINE_MODELS_SHARE), prove)
        search_share = 0.1 if small else 0.35
    elif not small and not block and len(problem.hot) <= LINE_MODEL_MAX_HOT:
        # Objects that may start inside a line: the line models of the same record as if
        # it were cache-aligned give starting points (judged by the real cost; their
        # bounds do not apply here).
        view = replace(problem, starts=(0,), object_align=problem.line, start_weights=())
        _line_models(view, cands, det_total * 0.2, prove, own=False)
    work = len(problem.units) + sum(len(fp.units) for fp in problem.lines_fp + problem.dirty_fp)
    evals = min(int(WORK_PER_SECOND * time_limit * search_share / max(work, 1)),
                EVALS_PER_HOT_UNIT * len(problem.hot) + 2_000)
    before = int(evals * ORDER_SHARE_BEFORE_BLOCK) if block else evals
    _order_search(problem, cands, stages, before)
    best = cands.best()
    if best is not None and searchable and not _proven(problem, best, stages):
        # Objects that may start inside a line: exact search of the granule relaxation
        # (block_search), for a bound and possibly better layouts.
        share = BLOCK_SHARE_SMALL if small else \
            BLOCK_SHARE_LARGE if len(problem.units) > LARGE_UNITS else BLOCK_SHARE
        stages.extend(_block_search(problem, cands, best, time_limit, share, stages))
        if block:
            _order_search(problem, cands, stages, evals - before)
    best = cands.best()
    if small:
        # Exact search if not proven yet; else only the size and order tie-breaks.
        proven = best is not None and _proven(problem, best, stages)
        model = LayoutModel(problem)
        if best is not None:
            model.hint(best.placement.order, best.placement.offsets)
        det = det_total * EXACT_SHARE
        known = (best.cost.lines, best.cost.dirty) if proven and best is not None else None
        if known is not None:
            det = min(det, det_total * TIE_BREAK_SHARE)
        solution = model.solve(det, known)
        if solution is not None:
            cands.add(solution.order, "cp-sat exact")
            if not proven:
                stages.append(solution.stages)
    return stages


def _order_search(problem: LayoutProblem, cands: _Candidates, stages: list[list[StageOutcome]],
                  evals: int) -> None:
    """Local search on complete orders from the best candidate, with `evals` evaluations,
    unless that is proven optimal already."""
    best = cands.best()
    if best is None or evals <= 0 or _proven(problem, best, stages):
        return
    order = improve_order(problem, list(best.placement.order), max_evals=evals)
    cands.add(order, best.method + " + local search")


def _block_search(problem: LayoutProblem, cands: _Candidates, best: _Candidate,
                  time_limit: float, share: float,
                  stages: list[list[StageOutcome]]) -> list[list[StageOutcome]]:
    """Run block_search from `best`; its relaxed layouts become candidates. Returns its
    bounds as stage outcomes (lines: the proven bound, with the value when it is the
    relaxation's optimum; dirty: the bound among layouts with that many lines).

    Cache-aligned objects (`share` unused: NATURAL_BLOCK_SHARE), when the best layout is
    above the line models' lines bound: the lines search of the relaxation with free gaps
    (FREE_GAPS_FIRST of the budget), then, if no layout at the bound realises, the search
    over declaration orders (with its dirty search), both asking that bound first; then,
    with the lines at the bound, the dirty search of the relaxation with what is left
    (docs/layout.md, "Dirty lines of cache-aligned objects")."""
    def judge(targets: dict[int, int]) -> tuple[int, int] | None:
        cand = cands.add(realize(problem, targets), "block search")
        return None if cand is None else (cand.cost.lines, cand.cost.dirty)

    if not natural(problem):
        return [_outcomes(block_search(problem, upper=(best.cost.lines, best.cost.dirty),
                                       max_nodes=int(NODES_PER_SECOND * time_limit * share),
                                       judge=judge))]
    out: list[list[StageOutcome]] = []
    nodes = int(NODES_PER_SECOND * time_limit * NATURAL_BLOCK_SHARE)
    lower = _solver_bounds(problem, best, stages)[0]
    floor = _dirty_floor(stages)     # the line models' dirty bound at `lower` lines
    lower_dirty = floor[1] if floor is not None and floor[0] == lower else 0
    relaxed = all(not problem.units[u].fixed for u in problem.hot)
    left = nodes if best.cost.lines > lower else int(nodes * FREE_GAPS_DIRTY_ONLY)
    if best.cost.lines > lower and relaxed:
        # the relaxation with free gaps first: a layout of it at the bound that realises
        # as a C order proves the lines (and its dirty search follows at once)
        result = block_search(
            problem, upper=(best.cost.lines, best.cost.dirty),
            max_nodes=int(nodes * FREE_GAPS_FIRST), judge=judge,
            lower=lower, lower_dirty=lower_dirty, free_gaps=True,
            plans=FREE_GAPS_PLANS, threshold_share=1.0)
        out.append(_outcomes(result))
        left -= result.nodes
    best = cands.best() or best
    if best.cost.lines > lower and left > 0:
        result = block_search(
            problem, upper=(best.cost.lines, best.cost.dirty), max_nodes=left, judge=judge,
            lower=lower, lower_dirty=lower_dirty,
            plans=NATURAL_PLANS, threshold_share=1.0)
        out.append(_outcomes(result))
        left -= result.nodes
    best = cands.best() or best
    if best.cost.lines <= lower and left > 0 and relaxed and \
            not _proven(problem, best, stages + out):
        out.append(_outcomes(block_search(
            problem, upper=(best.cost.lines, best.cost.dirty), max_nodes=left, judge=judge,
            lower=lower, lower_dirty=lower_dirty,
            free_gaps=True)))
    return out


def _outcomes(result: BlockSearchResult) -> list[StageOutcome]:
    """block_search's bounds as stage outcomes."""
    out = [StageOutcome("lines", "OPTIMAL" if result.lines_exact else "FEASIBLE",
                        result.lines_bound if result.lines_exact else None,
                        result.lines_bound)]
    if result.dirty_bound is not None:
        out.append(StageOutcome("dirty", "OPTIMAL" if result.dirty_exact else "FEASIBLE",
                                None, result.dirty_bound))
    return out


def _line_models(problem: LayoutProblem, cands: _Candidates, det: float, prove: bool,
                 own: bool = True) -> list[list[StageOutcome]]:
    """Cache-aligned objects: the line-assignment relaxations (see line_model).

    First the class model (fields with the same footprints as one fluid item): small, so
    it usually proves its optimum, a lower bound, quickly. If that optimum cannot be
    arranged into a C order, the tight class model (`LineModel(tight=True)`), told the
    lines optimum when a candidate reaches it (`prove`). Then the per-unit model, told
    that bound (every unit assignment is a class assignment of the same cost), for better
    targets and its own bound. Both realise targets into candidates, as they are and
    arranged (line_arrangement). Then (`prove`), where the line filling applies and
    nothing is proven, the unit model with its lines in any order, arranged, and the line
    filling. With `own` False, `problem` is only a model of the candidates' problem: no
    early stop, no bounds, no line filling."""
    out: list[list[StageOutcome]] = []
    known: int | None = None
    total_det = det
    # H4: the line-filling model runs last (records the exact model does not take)
    fill = prove and own and fill_applicable(problem) and \
        len(problem.units) > EXACT_MAX_UNITS
    class_share = CLASS_SHARE if own else CLASS_SHARE_AS_IF_ALIGNED
    unarranged = False      # the class model's optimum did not arrange into a C order
    floor: int | None = None    # ... and its dirty bound
    for classes, tight, share in ((True, False, class_share),
                                    (True, True, TIGHT_SHARE),
                                    (False, False, 1.0 - FILL_SHARE if fill else 1.0)):
        best = cands.best()
        if own and known is not None and best is not None and \
                best.cost.lines <= known and _proven(problem, best, out):
            break
        if tight and not (unarranged and prove):
            continue
        model = LineModel(problem, classes=classes, contiguous=not classes, tight=tight)
        best = cands.best()
        if best is not None:
            model.hint(best.placement.offsets)
        if tight and best is not None and known is not None and best.cost.lines <= known:
            model.lines_reached(known, floor)
        elif known is not None:
            model.at_least(known)
        solution = model.solve(det * share)
        det -= solution.det_used if solution is not None else 0.0
        if solution is None:
            continue
        dirty = solution.stage("dirty")
        if own and classes and not tight and RESUME_SHARE and dirty is not None and \
                not dirty.optimal and len(problem.units) <= LARGE_UNITS:
            # the class model's dirty stage, cut short: go on with it
            more = model.resume_dirty(solution, RESUME_SHARE * total_det)
            if more is not None:
                solution = more
                dirty = solution.stage("dirty")
        label = ("line model" if own else "aligned line model") + \
            (" (classes)" if classes else "")
        for assignment in (solution.lines, *solution.earlier):
            cands.add(realize(problem, model.targets(solution, assignment)), label)
            # the same assignment with its lines reordered (line_arrangement), for the
            # class model after sharing each class out among its units again if need be
            arranged = arrange_lines(problem, assignment)
            if arranged is None and classes and lines_interchangeable(problem):
                units = respread(problem, assignment, model.group_of, RESPREAD_DET)
                arranged = None if units is None else arrange_lines(problem, units)
            if arranged is not None:
                cands.add(realize(problem, arranged), label)
            elif classes and not tight and assignment is solution.lines:
                unarranged = dirty is not None and dirty.optimal
                floor = dirty.bound if dirty is not None else None
        if own:
            out.append(solution.stages)
        first = solution.stage("lines")
        if first is not None and first.bound is not None:
            known = max(known or 0, first.bound)
    extra = FILL_EXTRA * total_det      # the exact model's share (it does not run here)
    best = cands.best()
    if fill and best is not None and not (known is not None and best.cost.lines <= known
                                          and _proven(problem, best, out)) and \
            lines_interchangeable(problem):
        # the unit model with its lines in any order (symmetry broken), since its
        # solutions are arranged: often proves what the contiguous one does not
        model = LineModel(problem)
        model.hint(best.placement.offsets)
        if known is not None:
            model.at_least(known)
        solution = model.solve(extra * ANY_ORDER_SHARE)
        if solution is not None:
            extra -= solution.det_used
            for assignment in (solution.lines, *solution.earlier):
                arranged = arrange_lines(problem, assignment)
                if arranged is not None:
                    cands.add(realize(problem, arranged), "line model (any order)")
            out.append(solution.stages)
            first = solution.stage("lines")
            if first is not None and first.bound is not None:
                known = max(known or 0, first.bound)
    # --- line filling (H4, issue 6): integer model of all units, cache-aligned ---
    best = cands.best()
    if fill and best is not None and not (known is not None and best.cost.lines <= known
                                          and _proven(problem, best, out)):
        # what the unit models left, and the rest of the exact model's share
        orders, fill_stages, _ = fill_orders(problem, best.placement.offsets, known,
                                             det + extra, _dirty_floor(out))
        if fill_stages:
            out.append([st for st in fill_stages if st.name in ("lines", "dirty")])
            if fill_stages[0].bound is not None:
                known = max(known or 0, fill_stages[0].bound)
        for order in orders:
            # Only proven orders (lines and dirty lines at their bounds): from a merely
            # better one, the order search that follows did worse on the bench than from
            # the earlier best.
            cand = cands.add(order, "line filling")
            if cand is not None and not _proven(problem, cand, out):
                cands.items.remove(cand)
    # --- end line filling ---
    return out


def _dirty_floor(stage_sets: list[list[StageOutcome]]) -> tuple[int, int] | None:
    """(lines, dirty): the best proven dirty bound among layouts of at most that many
    lines, from the line models' stages (H4: lets the line-filling model stop at it)."""
    floors = []
    for stages in stage_sets:
        by_name = {st.name: st for st in stages}
        lines_stage, dirty_stage = by_name.get("lines"), by_name.get("dirty")
        if lines_stage is not None and lines_stage.value is not None and \
                dirty_stage is not None and dirty_stage.bound is not None:
            floors.append((lines_stage.value, -dirty_stage.bound))
    if not floors:
        return None
    lines, neg = min(floors)
    return lines, -neg


def _proven(problem: LayoutProblem, cand: _Candidate, stages: list[list[StageOutcome]]
            ) -> bool:
    lines_lb, dirty_lb = _solver_bounds(problem, cand, stages)
    return cand.cost.lines <= lines_lb and cand.cost.dirty <= dirty_lb


def _solver_bounds(problem: LayoutProblem, cand: _Candidate,
                   stage_sets: list[list[StageOutcome]]) -> tuple[int, int]:
    """Lower bounds on (lines, dirty lines given optimal lines) for the solver's weights.

    The dirty bound of a stage is valid only when the stage ran with the lines fixed at a
    value no better than the candidate's (so every lines-optimal layout was allowed)."""
    lines_lb = simple_bound(problem, problem.lines_fp)
    dirty_lb = simple_bound(problem, problem.dirty_fp)
    for stages in stage_sets:
        lines_stage = next((st for st in stages if st.name == "lines"), None)
        if lines_stage is not None and lines_stage.bound is not None:
            lines_lb = max(lines_lb, lines_stage.bound)
    for stages in stage_sets:
        by_name = {st.name: st for st in stages}
        lines_stage, dirty_stage = by_name.get("lines"), by_name.get("dirty")
        if (cand.cost.lines <= lines_lb and lines_stage is not None
                and lines_stage.value is not None and cand.cost.lines <= lines_stage.value
                and dirty_stage is not None and dirty_stage.bound is not None):
            dirty_lb = max(dirty_lb, dirty_stage.bound)
    return lines_lb, dirty_lb


def _result(problem: LayoutProblem, chosen: _Candidate, stages: list[list[StageOutcome]],
            warnings: list[str], seconds: float) -> LayoutResult:
    p = problem
    before_place = original_placement(p)
    before = cost_totals(p, before_place.offsets, p.report_lines_fp, p.report_dirty_fp)
    after = cost_totals(p, chosen.placement.offsets, p.report_lines_fp, p.report_dirty_fp)

    # Lower bounds for the solver's objective (equal to the report's unless merging).
    lines_lb, dirty_lb = _solver_bounds(p, chosen, stages)
    optimal = chosen.cost.lines <= lines_lb and chosen.cost.dirty <= dirty_lb
    if p.merged:
        # The solver's bounds are for merged weights; report bounds valid for the profile.
        report_lines_lb = simple_bound(p, p.report_lines_fp)
        report_dirty_lb = simple_bound(p, p.report_dirty_fp)
    else:
        report_lines_lb, report_dirty_lb = lines_lb, dirty_lb
    fig_before, fig_after = line_figures(p, before), line_figures(p, after)
    lb = per_invocation(p, report_lines_lb)
    gap = 0.0 if fig_after.lines <= 0 else max(0.0, (fig_after.lines - lb) / fig_after.lines)
    order, offsets, bits = _field_offsets(p, chosen.placement)
    relaxed = {name: align for name, align in sorted(p.relaxed.items())
               if offsets[name] % p.units[p.field_unit[name]].natural_align}
    method = chosen.method + (" (optimal)" if optimal else "")
    hot_names = tuple(n for u in sorted(p.hot, key=lambda u: p.units[u].offset)
                      for n in p.units[u].fields)
    return LayoutResult(
        record=p.record.name, order=order, offsets=offsets, bit_offsets=bits,
        size_before=p.record.size, size_after=chosen.placement.size, size_limit=p.size_limit,
        lines_before=fig_before.lines, lines_after=fig_after.lines, lines_lower_bound=lb,
        dirty_before=fig_before.dirty, dirty_after=fig_after.dirty,
        dirty_lower_bound=per_invocation(p, report_dirty_lb),
        lines_worst_before=fig_before.lines_worst, lines_worst_after=fig_after.lines_worst,
        optimal=optimal, gap=0.0 if optimal else gap, solver_seconds=seconds, method=method,
        merged=p.merged, constraints_honoured=p.honoured, relaxed_alignment=relaxed,
        hot_fields=hot_names, cache_line=p.line, object_align=p.object_align,
        start_offsets=len(p.starts), invocations=p.invocations, warnings=tuple(warnings),
        bitfield_barriers=_barriers(p, chosen.placement),
        kinds_before=kind_figures(p, before_place.offsets),
        kinds_after=kind_figures(p, chosen.placement.offsets),
        start_distribution=dict(zip(p.starts, p.start_weights, strict=True))
        if p.start_weights else {})


def evaluate_order(record: Record, profile_type: TypeProfile, order: Sequence[str], *,
                   cache_line: int = 64, object_align: int | None = None,
                   relax_align: bool = False,
                   constraints: LayoutConstraints = LayoutConstraints(),  # noqa: B008
                   allow_growth: bool = False,
                   entry_weights: Mapping[str, float] | None = None) -> LayoutEvaluation:
    """Cost of declaring `record`'s fields in `order` (all field names, each once).

    Fields sharing a bit-field storage unit are placed together where the first of them
    appears; a flexible array member is placed last wherever it appears. Constraint
    violations (including the size limit) are reported, not raised.
    """
    problem = build_problem(record, profile_type, cache_line=cache_line,
                            object_align=object_align, relax_align=relax_align,
                            constraints=constraints, allow_growth=allow_growth, merge=False,
                            entry_weights=entry_weights)
    names = [f.name for f in record.fields]
    if sorted(order) != sorted(names):
        raise UserError(f"the order must name every field of {record.name} exactly once")
    units: list[int] = []
    for name in order:
        if problem.fam is not None and name == problem.fam.name:
            continue
        u = problem.field_unit[name]
        if u not in units:
            units.append(u)
    placement = place_order(problem, units)
    totals = cost_totals(problem, placement.offsets, problem.report_lines_fp,
                         problem.report_dirty_fp)
    field_order, offsets, bits = _field_offsets(problem, placement)
    return LayoutEvaluation(field_order, offsets, bits, placement.size,
                            line_figures(problem, totals), tuple(violations(problem, placement)),
                            _barriers(problem, placement),
                            kind_figures(problem, placement.offsets))
