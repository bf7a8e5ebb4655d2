"""CP-SAT line-assignment relaxation for objects that start on a cache-line boundary.

Each hot unit is assigned to cache lines (bins of `line` bytes, less the bytes of the fixed
area and pinned units). A unit that can straddle a line boundary (size larger than its
alignment, or than a line) may spread its bytes over up to ceil(size / line) + 1 lines; any
other unit sits in one line. Footprint f occupies line l when one of its units has bytes
there. Every C layout of an aligned object is such an assignment (alignment padding, order,
contiguity, cold units and side/first constraints are dropped), so the optimum is a valid
lower bound on the lines (then, among those, on the dirty lines). Free lines are
interchangeable, so at most as many are modelled as the units could use, and used free lines
come first. The solution also gives target offsets (`targets`) for `realize`. This module
neither realises orders nor applies to objects that may start inside a line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from cachefit.layout.cpsat_model import StageOutcome
from cachefit.layout.line_cost import fixed_lines
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, align_up


@dataclass
class LineSolution:
    """Lines (with bytes) per hot unit, and the stage outcomes (values and bounds)."""

    lines: dict[int, list[tuple[int, int]]]
    stages: list[StageOutcome]
    seconds: float

    def stage(self, name: str) -> StageOutcome | None:
        return next((s for s in self.stages if s.name == name), None)


class LineModel:
    def __init__(self, problem: LayoutProblem) -> None:
        if problem.starts != (0,):
            raise ValueError("the line model needs objects aligned on cache lines")
        self.p = problem
        line = problem.line
        self.items = sorted((u for u in problem.hot if not problem.units[u].fixed),
                            key=lambda u: (problem.units[u].offset, u))
        total_lines = max(1, problem.size_limit // line)
        fixed_bytes = [0] * total_lines
        spans = [(0, problem.prefix_end)] if problem.prefix_end else []
        spans += [(u.offset, u.offset + u.size) for u in problem.units if u.fixed and u.size]
        for b, e in spans:
            for ell in range((b // line), min(total_lines, (e - 1) // line + 1)):
                fixed_bytes[ell] += max(0, min(e, (ell + 1) * line) - max(b, ell * line))
        self.kmax: dict[int, int] = {}
        for u in self.items:
            unit = problem.units[u]
            k = -(-unit.size // line)
            self.kmax[u] = k + 1 if unit.size > unit.align or unit.size > line else k
        reserved = [ell for ell in range(total_lines) if fixed_bytes[ell]]
        free = [ell for ell in range(total_lines) if not fixed_bytes[ell]]
        free = free[:sum(self.kmax.values())]
        self.lines = sorted(reserved + free)
        self.free = free
        self.capacity = {ell: line - fixed_bytes[ell] for ell in self.lines}
        self.m = cp_model.CpModel()
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.q: dict[tuple[int, int], cp_model.LinearExprT] = {}
        self.qvar: dict[tuple[int, int], cp_model.IntVar] = {}  # bytes of splittable units
        self._vars: list[cp_model.IntVar] = []
        self._build()
        self.lines_expr = self._objective(problem.lines_fp)
        self.dirty_expr = self._objective(problem.dirty_fp)
        self._values: dict[int, int] | None = None

    def _bool(self, name: str) -> cp_model.IntVar:
        v = self.m.new_bool_var(name)
        self._vars.append(v)
        return v

    def _build(self) -> None:
        p = self.p
        for u in self.items:
            unit = p.units[u]
            xs = []
            for ell in self.lines:
                if unit.size > self.capacity[ell] and self.kmax[u] == 1:
                    continue
                x = self._bool(f"x{u}_{ell}")
                self.x[(u, ell)] = x
                xs.append((ell, x))
            if self.kmax[u] == 1:
                self.m.add_exactly_one(x for _, x in xs)
                for ell, x in xs:
                    self.q[(u, ell)] = unit.size * x
            else:
                qs = []
                for ell, x in xs:
                    cap = min(unit.size, self.capacity[ell])
                    q = self.m.new_int_var(0, cap, f"q{u}_{ell}")
                    self._vars.append(q)
                    self.m.add(q <= cap * x)
                    self.m.add(q >= 1).only_enforce_if(x)
                    self.q[(u, ell)] = q
                    self.qvar[(u, ell)] = q
                    qs.append(q)
                self.m.add(sum(qs) == unit.size)
                self.m.add(sum(x for _, x in xs) <= self.kmax[u])
        for ell in self.lines:
            terms = [self.q[(u, ell)] for u in self.items if (u, ell) in self.q]
            if terms:
                self.m.add(sum(terms) <= self.capacity[ell])
        # symmetry: used free lines come first
        used = {}
        for ell in self.free:
            here = [self.x[(u, ell)] for u in self.items if (u, ell) in self.x]
            if not here:
                continue
            flag = self._bool(f"used{ell}")
            for x in here:
                self.m.add_implication(x, flag)
            self.m.add_bool_or(here).only_enforce_if(flag)
            used[ell] = flag
        flags = [used[ell] for ell in self.free if ell in used]
        for a, b in zip(flags, flags[1:], strict=False):
            self.m.add_implication(b, a)

    def _objective(self, fps: tuple[WeightedFootprint, ...]) -> cp_model.LinearExprT:
        terms: list[cp_model.LinearExprT] = []
        constant = 0
        line = self.p.line
        for fp in fps:
            fixed = fixed_lines(self.p, fp, 0)
            ys = []
            for ell in self.lines:
                if ell in fixed:
                    continue
                xs = [self.x[(u, ell)] for u in fp.units if (u, ell) in self.x]
                if not xs:
                    continue
                y = self._bool(f"y{ell}")
                for x in xs:
                    self.m.add_implication(x, y)
                ys.append(y)
            nbytes = sum(e - b for b, e in fp.fixed) + sum(self.p.units[u].size
                                                           for u in fp.units)
            need = -(-nbytes // line) - len(fixed)
            if ys and need > 0:
                self.m.add(sum(ys) >= need)
            constant += fp.weight * len(fixed)
            if ys:
                terms.append(fp.weight * sum(ys))
        return sum(terms) + constant if terms else constant

    def hint(self, offsets: list[int] | tuple[int, ...]) -> None:
        """Hint the assignment induced by a placement (valid for the relaxation)."""
        line = self.p.line
        self.m.clear_hints()
        for u in self.items:
            b = offsets[u]
            size = self.p.units[u].size
            for ell in self.lines:
                lo, hi = max(b, ell * line), min(b + size, (ell + 1) * line)
                inside = max(0, hi - lo)
                if (u, ell) in self.x:
                    self.m.add_hint(self.x[(u, ell)], int(inside > 0))
                if (u, ell) in self.qvar:
                    self.m.add_hint(self.qvar[(u, ell)], inside)

    def _stage(self, name: str, expr: cp_model.LinearExprT, det: float, wall: float
               ) -> tuple[StageOutcome, float]:
        if isinstance(expr, int):
            return StageOutcome(name, "OPTIMAL", expr, expr), 0.0
        self.m.minimize(expr)
        solver = cp_model.CpSolver()
        prm = solver.parameters
        prm.num_workers = 1
        prm.random_seed = 20240531
        prm.max_deterministic_time = max(det, 0.01)
        prm.max_time_in_seconds = max(wall, 0.05)
        status = solver.solve(self.m)
        used = solver.response_proto.deterministic_time
        label = solver.status_name(status)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return StageOutcome(name, label, None, None), used
        self._values = {v.index: int(solver.value(v)) for v in self._vars}
        value = int(round(solver.objective_value))
        bound = int(round(solver.best_objective_bound))
        self.m.add(expr <= value)
        self.m.clear_hints()
        for v in self._vars:
            self.m.add_hint(v, self._values[v.index])
        return StageOutcome(name, label, value, bound), used

    def solve(self, det_budget: float, wall_budget: float) -> LineSolution | None:
        began = time.monotonic()
        stages: list[StageOutcome] = []
        det_left = det_budget
        for name, expr, share in (("lines", self.lines_expr, 0.75),
                                  ("dirty", self.dirty_expr, 1.0)):
            wall_left = wall_budget - (time.monotonic() - began)
            if stages and (det_left <= 0.005 or wall_left <= 0.01):
                break
            out, used = self._stage(name, expr, det_left * share, max(wall_left, 0.05))
            det_left -= used
            stages.append(out)
            if out.value is None:
                break
        if self._values is None:
            return None
        values = self._values
        lines: dict[int, list[tuple[int, int]]] = {}
        for (u, ell), x in self.x.items():
            if values[x.index]:
                q = self.qvar.get((u, ell))
                nbytes = values[q.index] if q is not None else self.p.units[u].size
                lines.setdefault(u, []).append((ell, nbytes))
        return LineSolution(lines, stages, time.monotonic() - began)

    def targets(self, solution: LineSolution) -> dict[int, int]:
        """Offsets placing every unit in (or from) its first line; straddlers last in it."""
        p = self.p
        line = p.line
        busy: list[tuple[int, int]] = [(0, p.prefix_end)] if p.prefix_end else []
        busy += [(u.offset, u.offset + u.size) for u in p.units if u.fixed and u.size]
        by_line: dict[int, list[int]] = {}
        for u, parts in solution.lines.items():
            by_line.setdefault(min(ell for ell, _ in parts), []).append(u)
        targets: dict[int, int] = {}
        for ell in sorted(by_line):
            whole = [u for u in by_line[ell] if len(solution.lines[u]) == 1]
            split = [u for u in by_line[ell] if len(solution.lines[u]) > 1]
            whole.sort(key=lambda u: (-p.units[u].align, -p.units[u].size, u))
            for u in whole + split:
                unit = p.units[u]
                at = align_up(ell * line, unit.align)
                if u in split:
                    first_bytes = dict(solution.lines[u])[ell]
                    at = max(at, align_up((ell + 1) * line - first_bytes, unit.align))
                while True:
                    clash = next(((s, e) for s, e in busy
                                  if unit.size and s < at + unit.size and at < e), None)
                    if clash is None:
                        break
                    at = align_up(clash[1], unit.align)
                busy.append((at, at + unit.size))
                targets[u] = at
        return targets
