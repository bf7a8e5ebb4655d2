"""Exact CP-SAT model of a layout: unit offsets, cache-line coverage, staged objectives.

Every unit is in the model and a circuit over the units (plus a depot) fixes their order;
each arc i -> j forces C placement, o_j = align_up(o_i + s_i, a_j), and the depot's arcs
fix the first unit after the fixed area and the end. Solutions are exactly the C layouts
of some order, so the optimum is the best order and the bound a valid lower bound. Pins,
chains, `first` and side rules are constraints; interchangeable units are ordered.

Lines: per unit and object start s, one-hot booleans for the line its first byte is in and
a boolean for "spills into one more line"; per footprint and line a boolean "occupied"
implied by the units that cover it, counted with the start's weight (1 each in the uniform
placement model; the observed distribution's, issue 26). Objectives are minimised one after
another (lines, dirty lines, size, order changes), each stage fixing the previous
optimum. Deterministic: one worker, fixed seed, budgets in deterministic time. This module
does not decide when the model is small enough to use (see `optimizer`). Every CP-SAT
solver of cachefit is made by `new_solver`, which leaves Ctrl-C to cachefit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from cachefit.layout.line_cost import fixed_lines, footprint_bound, footprint_bound_total
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, align_up

Lit = cp_model.IntVar


@dataclass
class StageOutcome:
    name: str
    status: str
    value: int | None
    bound: int | None

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL"


SOLVER_SEED = 20240531
"""CP-SAT's random seed in every model (with one worker, the same input gives the same
answer)."""


def new_solver() -> cp_model.CpSolver:
    """A CP-SAT solver that leaves SIGINT to Python (issue 29). By default a solve installs
    its own SIGINT handler, which stops the search without telling anyone, and afterwards
    puts back SIG_DFL rather than the handler it replaced, so that any later Ctrl-C killed
    cachefit without its cleanup. Without it, Ctrl-C during a solve is raised as
    KeyboardInterrupt when the solve returns (within its time limit)."""
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False
    return solver


def solve_stage(m: cp_model.CpModel, name: str, expr: cp_model.LinearExprT,
                variables: list[cp_model.IntVar], det: float, *, presolve: bool = True
                ) -> tuple[StageOutcome, float, dict[int, int] | None]:
    """One stage of a lexicographic objective, shared by the CP-SAT models: minimise `expr`
    on one worker within `det` deterministic seconds (no wall-clock limit, so the machine's
    load never changes the answer), then fix it at the value found (`expr <= value` is
    added to `m`). Returns the outcome, the deterministic time used and the solution's
    values by variable index (None when no solution was found); a solution becomes the
    hint of the next stage on `m`."""
    if isinstance(expr, int):
        return StageOutcome(name, "OPTIMAL", expr, expr), 0.0, None
    m.minimize(expr)
    solver = new_solver()
    prm = solver.parameters
    prm.num_workers = 1
    prm.random_seed = SOLVER_SEED
    prm.max_deterministic_time = max(det, 0.01)
    prm.cp_model_presolve = presolve
    status = solver.solve(m)
    used = solver.response_proto.deterministic_time
    label = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return StageOutcome(name, label, None, None), used, None
    values = {v.index: int(solver.value(v)) for v in variables}
    value = int(round(solver.objective_value))
    bound = int(round(solver.best_objective_bound))
    m.add(expr <= value)
    hint_values(m, variables, values)
    return StageOutcome(name, label, value, bound), used, values


def hint_values(m: cp_model.CpModel, variables: list[cp_model.IntVar],
                values: dict[int, int]) -> None:
    """Replace `m`'s hints by `values` (by variable index) for those of `variables` it has."""
    m.clear_hints()
    for v in variables:
        if v.index in values:
            m.add_hint(v, values[v.index])


Stage = Callable[[str, cp_model.LinearExprT, float], tuple[StageOutcome, float]]


def run_stages(stage: Stage, stages: Sequence[tuple[str, cp_model.LinearExprT, float]],
               det_budget: float, current: Callable[[], dict[int, int] | None]
               ) -> tuple[list[StageOutcome], list[dict[int, int]], float, float]:
    """Run lexicographic `stages` (name, objective, share of the deterministic budget left)
    through `stage` until one finds nothing or the budget runs out; after each, `current()`
    is the model's solution. Returns (outcomes, distinct solutions in the order found,
    deterministic seconds used, wall seconds, for reports only)."""
    began = time.monotonic()
    done: list[StageOutcome] = []
    found: list[dict[int, int]] = []
    det_left = det_budget
    for name, expr, share in stages:
        if done and det_left <= 0.005:
            break
        out, used = stage(name, expr, det_left * share)
        det_left -= used
        done.append(out)
        if out.value is None:
            break
        values = current()
        if values is not None and values not in found:
            found.append(values)
    return done, found, det_budget - det_left, time.monotonic() - began


@dataclass
class ModelSolution:
    """Offsets and order of the units after all stages."""

    offsets: dict[int, int]
    order: list[int]
    stages: list[StageOutcome] = field(default_factory=list)
    seconds: float = 0.0

    def stage(self, name: str) -> StageOutcome | None:
        return next((s for s in self.stages if s.name == name), None)


@dataclass
class _Cover:
    """How one unit covers lines for one start: certain lines, and conditional ones."""

    certain: set[int]
    items: list[tuple[int, tuple[Lit, ...]]]


class LayoutModel:
    """Build once, then `solve` (optionally after `hint`)."""

    def __init__(self, problem: LayoutProblem) -> None:
        self.p = problem
        self.members = problem.movable
        self.member_set = set(self.members)
        self.m = cp_model.CpModel()
        self.k: dict[int, cp_model.IntVar] = {}
        self.o: dict[int, cp_model.LinearExpr] = {}
        self.arcs: dict[tuple[int, int], cp_model.IntVar] = {}
        self.end: cp_model.IntVar | None = None
        self.size: cp_model.IntVar | None = None  # the record size / record alignment
        self._b: dict[int, tuple[int, int, int]] = {}   # var index -> (unit, start, line)
        self._t: dict[int, tuple[int, int]] = {}        # var index -> (unit, start)
        self._y: dict[int, list[tuple[Lit, ...]]] = {}  # var index -> conjunctions
        self._inv: dict[int, tuple[int, int]] = {}      # var index -> (unit i, unit j)
        self._vars: list[cp_model.IntVar] = []
        self._cover: dict[tuple[int, int], _Cover] = {}
        self._values: dict[int, int] | None = None
        self._pairs: list[tuple[int, int]] | None = None
        self._forbid: set[tuple[int, int]] | None = None
        self._build_offsets()
        self._build_circuit()
        self._build_sides()
        self._symmetry()
        self.lines_expr = self._objective(problem.lines_fp)
        self.dirty_expr = self._objective(problem.dirty_fp)
        self.order_expr = self._inversions()

    # ------------------------------------------------------------------ variables

    def _new_int(self, lo: int, hi: int, name: str) -> cp_model.IntVar:
        v = self.m.new_int_var(lo, hi, name)
        self._vars.append(v)
        return v

    def _new_bool(self, name: str) -> cp_model.IntVar:
        v = self.m.new_bool_var(name)
        self._vars.append(v)
        return v

    def _bounds(self, u: int) -> tuple[int, int]:
        unit = self.p.units[u]
        if unit.fixed:
            return unit.offset, unit.offset
        lo = align_up(self.p.prefix_end, unit.align)
        hi = (self.p.size_limit - unit.size) // unit.align * unit.align
        return lo, hi

    def _build_offsets(self) -> None:
        for u in self.members:
            unit = self.p.units[u]
            lo, hi = self._bounds(u)
            if lo > hi:
                self.m.add_bool_or([])  # infeasible: the unit cannot fit
                lo = hi = max(lo, 0)
            k = self._new_int(lo // unit.align, hi // unit.align, f"k{u}")
            self.k[u] = k
            self.o[u] = cp_model.LinearExpr.term(k, unit.align)
        intervals = [self.m.new_fixed_size_interval_var(self.o[u], self.p.units[u].size,
                                                         f"iv{u}")
                     for u in self.members if self.p.units[u].size > 0]
        if intervals:
            self.m.add_no_overlap(intervals)

    def _follow(self, a: int, b: int, enforce: list[Lit] | None = None) -> None:
        """C placement of b right after a: o_b = align_up(o_a + s_a, a_b)."""
        sa = self.p.units[a].size
        ab = self.p.units[b].align
        c1 = self.m.add(self.o[b] >= self.o[a] + sa)
        c2 = self.m.add(self.o[b] <= self.o[a] + sa + ab - 1)
        if enforce:
            c1.only_enforce_if(enforce)
            c2.only_enforce_if(enforce)

    def _build_circuit(self) -> None:
        p = self.p
        n = self.members
        self.end = self._new_int(p.prefix_end, p.size_limit, "end")
        ra = p.record_align
        q = self._new_int(0, p.size_limit // ra, "q")
        self.size = q  # size = ra * q
        self.m.add(ra * q >= self.end)
        self.m.add(ra * q <= self.end + ra - 1)
        if p.size_min:
            self.m.add(ra * q >= p.size_min)
        if not n:
            self.m.add(self.end == p.prefix_end)
            return
        arcs: list[tuple[int, int, cp_model.IntVar]] = []
        for j in n:
            if p.first is not None and j != p.first:
                continue
            if j in p.pred:
                continue
            unit = p.units[j]
            at = align_up(p.prefix_end, unit.align)
            if unit.fixed and unit.offset != at:
                continue
            lit = self._new_bool(f"x_start_{j}")
            self.arcs[(-1, j)] = lit
            arcs.append((0, j + 1, lit))
            self.m.add(self.o[j] == at).only_enforce_if(lit)
        for i in n:
            if i not in p.succ:
                lit = self._new_bool(f"x_{i}_end")
                self.arcs[(i, -1)] = lit
                arcs.append((i + 1, 0, lit))
                self.m.add(self.end == self.o[i] + p.units[i].size).only_enforce_if(lit)
            for j in n:
                if i == j or not self._arc_possible(i, j):
                    continue
                lit = self._new_bool(f"x_{i}_{j}")
                self.arcs[(i, j)] = lit
                arcs.append((i + 1, j + 1, lit))
                self._follow(i, j, [lit])
        self.m.add_circuit(arcs)

    def _arc_possible(self, i: int, j: int) -> bool:
        p = self.p
        if i in p.succ:
            return p.succ[i] == j
        if j in p.pred:
            return False  # j's predecessor is forced (and it is not i, see above)
        if j == p.first:
            return False
        ui, uj = p.units[i], p.units[j]
        if ui.fixed and uj.fixed:
            return uj.offset == align_up(ui.offset + ui.size, uj.align)
        if uj.fixed:
            lo_i, _ = self._bounds(i)
            if align_up(lo_i + ui.size, uj.align) > uj.offset:
                return False
        return (i, j) not in self._forbidden_arcs()

    def _forbidden_arcs(self) -> set[tuple[int, int]]:
        if self._forbid is None:
            self._forbid = {(j, i) for i, j in self._interchangeable_pairs()}
        return self._forbid

    def _build_sides(self) -> None:
        p = self.p
        for rule in p.sides:
            u = rule.unit
            if u not in self.member_set:
                continue
            su = p.units[u].size
            if rule.marker is not None:
                mk = rule.marker
                if mk not in self.member_set:
                    continue
                sm = p.units[mk].size
                strict = 1 if su == 0 and sm == 0 else 0
                if rule.before:
                    self.m.add(self.o[u] + su + strict <= self.o[mk])
                else:
                    self.m.add(self.o[u] >= self.o[mk] + sm + strict)
            else:
                assert rule.offset is not None
                if rule.before:
                    self.m.add(self.o[u] + su <= rule.offset)
                else:
                    self.m.add(self.o[u] >= rule.offset)

    def _interchangeable_pairs(self) -> list[tuple[int, int]]:
        """Pairs (i, j), i before j originally, that no objective or rule distinguishes."""
        if self._pairs is not None:
            return self._pairs
        p = self.p
        ruled = set(p.succ) | set(p.pred) | {r.unit for r in p.sides}
        ruled |= {r.marker for r in p.sides if r.marker is not None}
        if p.first is not None:
            ruled.add(p.first)
        member_of: dict[int, list[tuple[str, int]]] = {}
        for tag, fps in (("l", p.lines_fp), ("d", p.dirty_fp)):
            for fi, fp in enumerate(fps):
                for u in fp.units:
                    member_of.setdefault(u, []).append((tag, fi))
        classes: dict[tuple[object, ...], list[int]] = {}
        for u in self.members:
            unit = p.units[u]
            if unit.fixed or u in ruled or unit.size == 0:
                continue
            key = (unit.size, unit.align, tuple(member_of.get(u, ())))
            classes.setdefault(key, []).append(u)
        pairs = []
        for group in classes.values():
            group.sort(key=lambda u: (p.units[u].offset, u))
            pairs += list(zip(group, group[1:], strict=False))
        self._pairs = pairs
        return pairs

    def _symmetry(self) -> None:
        for i, j in self._interchangeable_pairs():
            self.m.add(self.o[i] + self.p.units[i].size <= self.o[j])

    # -------------------------------------------------------------------- lines

    def _coverage(self, u: int, s: int) -> _Cover:
        key = (u, s)
        if key in self._cover:
            return self._cover[key]
        p = self.p
        unit = p.units[u]
        line = p.line
        m = -(-unit.size // line)
        lo, hi = self._bounds(u)
        if unit.fixed:
            at = s + unit.offset
            cov = _Cover(set(range(at // line, (at + unit.size - 1) // line + 1)), [])
            self._cover[key] = cov
            return cov
        g = min(unit.align, line)
        rmax = s % g + line - g
        rmin = (s + lo) % line if (s + lo) // line == (s + hi) // line else 0
        spill_possible = rmax > m * line - unit.size and unit.size > 0
        t = None
        if spill_possible:
            t = self._new_bool(f"t{u}_{s}")
            self._t[t.index] = (u, s)
        first_lo, first_hi = (s + lo) // line, (s + hi) // line
        certain: set[int] = set()
        items: list[tuple[int, tuple[Lit, ...]]] = []
        if first_lo == first_hi:
            certain.update(range(first_lo, first_lo + m))
            if t is not None:
                if rmin > m * line - unit.size:
                    certain.add(first_lo + m)
                else:
                    self.m.add(s + self.o[u] - line * first_lo
                               <= m * line - unit.size).only_enforce_if(t.Not())
                    items.append((first_lo + m, (t,)))
        else:
            bs = []
            for ell in range(first_lo, first_hi + 1):
                b = self._new_bool(f"b{u}_{s}_{ell}")
                self._b[b.index] = (u, s, ell)
                bs.append((ell, b))
                self.m.add(s + self.o[u] >= line * ell).only_enforce_if(b)
                self.m.add(s + self.o[u] <= line * ell + line - 1).only_enforce_if(b)
                for j in range(m):
                    items.append((ell + j, (b,)))
                if t is not None:
                    self.m.add(s + self.o[u] <= line * ell + m * line - unit.size
                               ).only_enforce_if([b, t.Not()])
                    items.append((ell + m, (b, t)))
            self.m.add_exactly_one(b for _, b in bs)
            first_line = cp_model.LinearExpr.weighted_sum([b for _, b in bs],
                                                          [ell for ell, _ in bs])
            self.m.add(s + self.o[u] - line * first_line >= 0)
            self.m.add(s + self.o[u] - line * first_line <= line - 1)
        cov = _Cover(certain, items)
        self._cover[key] = cov
        return cov

    def _objective(self, fps: tuple[WeightedFootprint, ...]) -> cp_model.LinearExprT:
        terms: list[cp_model.LinearExprT] = []
        constant = 0
        for fp in fps:
            total_terms: list[cp_model.LinearExprT] = []
            total_const = 0
            for s, w in self.p.weighted_starts():
                fixed = fixed_lines(self.p, fp, s)
                items: dict[int, list[tuple[Lit, ...]]] = {}
                for u in fp.units:
                    if self.p.units[u].size == 0:
                        continue
                    cov = self._coverage(u, s)
                    fixed |= cov.certain
                    for ell, lits in cov.items:
                        items.setdefault(ell, []).append(lits)
                ys = []
                for ell in sorted(items):
                    if ell in fixed:
                        continue
                    y = self._new_bool(f"y_{ell}")
                    self._y[y.index] = items[ell]
                    for lits in items[ell]:
                        self.m.add_bool_or([*(lit.Not() for lit in lits), y])
                    ys.append(y)
                count = len(fixed)
                bound = footprint_bound(self.p, fp, s)
                if ys and bound > count:
                    self.m.add(sum(ys) >= bound - count)
                constant += fp.weight * w * count
                total_const += count
                if ys:
                    terms.append(fp.weight * w * sum(ys))
                    total_terms.append(sum(ys))
            need = footprint_bound_total(self.p, fp) - total_const
            if total_terms and need > 0 and len(self.p.starts) > 1 \
                    and not self.p.start_weights:
                self.m.add(sum(total_terms) >= need)
        return sum(terms) + constant if terms else constant

    def _inversions(self) -> cp_model.LinearExprT | None:
        p = self.p
        n = self.members
        if len(n) > 90:
            return None
        hot = p.hot
        rank = sorted(n, key=lambda u: (p.units[u].offset, u))
        pairs = [(rank[a], rank[b]) for a in range(len(rank)) for b in range(a + 1, len(rank))]
        hot_pairs = sum(1 for i, j in pairs if i in hot and j in hot)
        cold_weight = hot_pairs + 1
        terms = []
        sym = set(self._interchangeable_pairs())
        for i, j in pairs:
            if (i in hot) != (j in hot) or (i, j) in sym:
                continue
            inv = self._new_bool(f"inv_{i}_{j}")
            self._inv[inv.index] = (i, j)
            gap = 0 if p.units[i].size == 0 or p.units[j].size == 0 else p.units[i].size
            self.m.add(self.o[i] + gap <= self.o[j]).only_enforce_if(inv.Not())
            terms.append((1 if i in hot else cold_weight) * inv)
        return sum(terms) if terms else None

    # -------------------------------------------------------------------- hints

    def hint(self, order: list[int] | tuple[int, ...], offsets: list[int] | tuple[int, ...]
             ) -> None:
        """Hint the complete solution of a valid C placement (`order` over all units)."""
        p = self.p
        line = p.line
        values: dict[int, int] = {}
        for u, k in self.k.items():
            values[k.index] = offsets[u] // p.units[u].align
        chain = [-1, *order, -1]
        used = set(zip(chain, chain[1:], strict=False))
        for key, lit in self.arcs.items():
            values[lit.index] = int(key in used)
        last = chain[-2]
        end = p.prefix_end if last == -1 else offsets[last] + p.units[last].size
        assert self.end is not None and self.size is not None
        values[self.end.index] = end
        values[self.size.index] = -(-end // p.record_align)
        for idx, (u, s, ell) in self._b.items():
            values[idx] = int((s + offsets[u]) // line == ell)
        for idx, (u, s) in self._t.items():
            size = p.units[u].size
            b = s + offsets[u]
            m = -(-size // line)
            values[idx] = int((b + size - 1) // line - b // line + 1 > m)
        for idx, conj in self._y.items():
            values[idx] = int(any(all(values[lit.index] for lit in c) for c in conj))
        pos = {u: i for i, u in enumerate(order)}
        for idx, (i, j) in self._inv.items():
            values[idx] = int(pos[j] < pos[i])
        self._apply_hint(values)

    def _apply_hint(self, values: dict[int, int]) -> None:
        hint_values(self.m, self._vars, values)

    # -------------------------------------------------------------------- solve

    def _stage(self, name: str, expr: cp_model.LinearExprT, det_budget: float
               ) -> tuple[StageOutcome, float]:
        """Minimise `expr`, then fix it at the value found. Returns (outcome, det. time)."""
        outcome, used, values = solve_stage(self.m, name, expr, self._vars, det_budget)
        if values is not None:
            self._values = values
        return outcome, used

    def solve(self, det_budget: float,
              known: tuple[int, int] | None = None) -> ModelSolution | None:
        """Run the stages; None if no solution was found.

        Stage budgets are shares of the deterministic budget left (so the same input gives
        the same answer on any machine load). With `known` = proven
        optimal (lines, dirty), those stages are replaced by constraints.
        """
        began = time.monotonic()
        plan: list[tuple[str, cp_model.LinearExprT | None, float]] = [
            ("lines", self.lines_expr, 0.6), ("dirty", self.dirty_expr, 0.5),
            ("size", self.size, 0.5), ("order", self.order_expr, 1.0)]
        if known is not None:
            self.m.add(self.lines_expr <= known[0])
            self.m.add(self.dirty_expr <= known[1])
            plan = plan[2:]
        outcomes: list[StageOutcome] = []
        det_left = det_budget
        for name, expr, share in plan:
            if expr is None:
                continue
            if det_left <= 0.005 and self._values is not None:
                break
            out, used = self._stage(name, expr, det_left * share)
            det_left -= used
            outcomes.append(out)
            if out.value is None:
                break
        if self._values is None:
            if outcomes and outcomes[0].value is None:
                return None
            # every objective was constant: any feasible assignment will do
            self._stage("feasible", sum(self.k.values()), det_budget)
            if self._values is None:
                return None
        values = self._values
        offsets = {u: values[self.k[u].index] * self.p.units[u].align for u in self.members}
        nxt = {a: b for (a, b), lit in self.arcs.items() if values[lit.index]}
        order: list[int] = []
        cur = nxt.get(-1, -1)
        while cur != -1 and len(order) <= len(self.members):
            order.append(cur)
            cur = nxt.get(cur, -1)
        return ModelSolution(offsets, order, outcomes, time.monotonic() - began)
