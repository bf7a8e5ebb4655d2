"""Integer line-filling model for cache-aligned objects: a relaxation whose solutions are
checked for realisability line by line, so that it can prove its own optimum.

All units, hot and cold, are assigned to the object's cache lines (lines of `line` bytes up
to the size limit S). With A the largest unit alignment:

* a unit of size equal to its alignment is *rigid*: it lies in one line. Rigid units that are
  interchangeable for the cost (same size, alignment and footprints; cold: same size and
  alignment) form a group with an integer count per line (no symmetry between them);
* any other unit may *cross* line boundaries: it has a multiple of its alignment in bytes in
  each of a run of consecutive lines, all of a line in the middle ones;
* at most one unit crosses each line boundary; a line holds at most its capacity; lines
  holding something come first;
* a line before the last used one is full: its units' bytes plus its padding `pad` equal
  the line; the padding is made of alignment gaps, counted bit by bit (a gap's bit 2^j
  needs a unit of alignment <= 2^j before it and one of alignment > 2^j after it), and in
  all it is at most S minus the units' total size.

Every C layout satisfies these (docs/layout.md, "Line filling"), so the optimum is a lower
bound. `realize` then looks for a C order with exactly the solution's line contents: line
by line, a depth-first search over the order of the line's units (by size and alignment)
from where the previous line ended, so that each lands inside its line and the unit
crossing into the next line starts exactly where the solution put it. If it succeeds, the
order's cost is the solution's cost, and an optimal solution proves the order optimal.

`fill_orders` drives it: lines first; only if that stage proves its value, further
solutions of that value until one is realised, then dirty lines (stopping at a bound
known from another relaxation) and padding (again looking further when the smaller
record has no C order). Orders of unproven lines are returned but are not optimal.

Applies only to plain problems (`applicable`: no fixed area, pins, chains, `first`,
sides, bit-fields, flexible array member or minimum size; alignments dividing the line).
This module does not choose among layouts nor evaluate orders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from cachefit.layout.cpsat_model import (
    StageOutcome,
    hint_values,
    new_solver,
    run_stages,
    solve_stage,
)
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, align_up

REALIZE_STEPS = 200_000
"""Search steps `realize` may take per solution (it gives up, returning None, after that)."""
MAX_UNITS = 128
"""Larger records are left to the other methods (the model grows with units x lines)."""
RETRIES = 4
"""At most this many further solutions of the proven lines optimum (`fill_orders`)."""
LINES_SHARE = 0.75
"""Share of `fill_orders`' budget for the lines stage (the rest: retries, dirty lines and
padding, which matter only once the lines are proven)."""
MASK_ITEMS = 60
"""Hot items in the symmetry masks (the heaviest; CP-SAT coefficients are 64-bit)."""


def applicable(problem: LayoutProblem) -> bool:
    """Whether the model describes `problem` (see the module docstring)."""
    p = problem
    if p.starts != (0,) or p.prefix_end or p.fam is not None or p.size_min:
        return False
    if p.succ or p.pred or p.first is not None or p.sides or not p.units or not p.hot:
        return False
    if len(p.units) > MAX_UNITS:
        return False
    if p.line % p.record_align or p.size_limit % p.record_align:
        return False
    for u in p.units:
        if u.fixed or u.bitfield or u.size <= 0 or u.size % u.align or p.line % u.align:
            return False
    return sum(u.size for u in p.units) <= p.size_limit


@dataclass
class FillSolution:
    """The stage outcomes and the assignments found (last stage's first)."""

    stages: list[StageOutcome]
    seconds: float
    det_used: float
    found: list[dict[int, int]] = field(default_factory=list)

    def stage(self, name: str) -> StageOutcome | None:
        return next((s for s in self.stages if s.name == name), None)


class LineFillModel:
    """Build once for an `applicable` problem, optionally `hint`, then `solve`."""

    def __init__(self, problem: LayoutProblem) -> None:
        if not applicable(problem):
            raise ValueError("the line fill model does not apply to this problem")
        p = self.p = problem
        line = p.line
        self.big = max(u.align for u in p.units)
        self.nlines = -(-p.size_limit // line)
        self.cap = [min(line, p.size_limit - ell * line) for ell in range(self.nlines)]
        lines_sig = {u: tuple(i for i, fp in enumerate(p.lines_fp) if u in fp.units)
                     for u in range(len(p.units))}
        dirty_sig = {u: tuple(i for i, fp in enumerate(p.dirty_fp) if u in fp.units)
                     for u in range(len(p.units))}
        self.rigid: dict[tuple[object, ...], list[int]] = {}
        self.split: list[int] = []
        for unit in sorted(p.units, key=lambda u: (u.offset, u.index)):
            u = unit.index
            if unit.size <= unit.align:
                key = (unit.size, unit.align, lines_sig[u], dirty_sig[u])
                self.rigid.setdefault(key, []).append(u)
            else:
                self.split.append(u)
        self.groups = list(self.rigid)
        self.item_of: dict[int, int] = {}
        for g, key in enumerate(self.groups):
            for u in self.rigid[key]:
                self.item_of[u] = -1 - g
        for u in self.split:
            self.item_of[u] = u
        self.m = cp_model.CpModel()
        self._vars: list[cp_model.IntVar] = []
        self.n: dict[tuple[int, int], cp_model.IntVar] = {}      # (group, line) -> count
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}      # (item, line) -> present
        self.k: dict[tuple[int, int], cp_model.IntVar] = {}      # (split unit, line) -> chunks
        self.cross: dict[tuple[int, int], cp_model.IntVar] = {}  # (split unit, l) -> l | l+1
        self.pad: dict[int, cp_model.IntVar] = {}                # line -> padding bytes
        self.used: list[cp_model.IntVar] = []
        self._build()
        self.rank = self._rank()
        self._symmetry()
        self.lines_expr = self._objective(p.lines_fp)
        self.dirty_expr = self._objective(p.dirty_fp)
        self._values: dict[int, int] | None = None
        self.last_det: float | None = None

    # ------------------------------------------------------------------ building

    def _int(self, lo: int, hi: int, name: str) -> cp_model.IntVar:
        v = self.m.new_int_var(lo, hi, name)
        self._vars.append(v)
        return v

    def _count(self, most: int, count_name: str, flag_name: str
               ) -> tuple[cp_model.IntVar, cp_model.IntVar]:
        """A count 0..most and its indicator "the count is not zero"."""
        n = self._int(0, most, count_name)
        x = self._int(0, 1, flag_name)
        self.m.add(n >= x)
        self.m.add(n <= most * x)
        return n, x

    def _build(self) -> None:
        p, m = self.p, self.m
        load: list[list[cp_model.LinearExprT]] = [[] for _ in range(self.nlines)]
        # per line: (alignment, number of units of it with bytes in the line)
        gaps: list[list[tuple[int, cp_model.LinearExprT]]] = [[] for _ in range(self.nlines)]
        for g, key in enumerate(self.groups):
            members = self.rigid[key]
            size, align = p.units[members[0]].size, p.units[members[0]].align
            counts = []
            for ell in range(self.nlines):
                most = min(len(members), self.cap[ell] // size)
                if most <= 0:
                    continue
                n, x = self._count(most, f"n{g}_{ell}", f"xg{g}_{ell}")
                self.n[(g, ell)] = n
                self.x[(-1 - g, ell)] = x
                counts.append(n)
                load[ell].append(size * n)
                gaps[ell].append((align, n))
            m.add(sum(counts) == len(members))
        for u in self.split:
            self._build_split(u, load, gaps)
        for ell in range(self.nlines - 1):
            crossing = [self.cross[(u, ell)] for u in self.split if (u, ell) in self.cross]
            if len(crossing) > 1:
                m.add(sum(crossing) <= 1)
        slack = p.size_limit - sum(unit.size for unit in p.units)
        for ell in range(self.nlines):
            total = sum(load[ell]) if load[ell] else 0
            flag = self._int(0, 1, f"used{ell}")
            m.add(total <= self.cap[ell] * flag)
            m.add(total >= flag)
            self.used.append(flag)
        for ell in range(self.nlines - 1):
            # a used line follows a full one: its units and their alignment gaps
            m.add_implication(self.used[ell + 1], self.used[ell])
            pad = self._int(0, max(0, min(self.cap[ell], slack)), f"pad{ell}")
            m.add(pad <= slack * self.used[ell + 1])
            self._padding(pad, gaps[ell], self.used[ell + 1])
            self.pad[ell] = pad
            total = sum(load[ell]) if load[ell] else 0
            m.add(total + pad == self.cap[ell]).only_enforce_if(self.used[ell + 1])
        if self.pad:
            m.add(sum(self.pad.values()) <= slack)

    def _padding(self, pad: cp_model.IntVar,
                 units: list[tuple[int, cp_model.LinearExprT]],
                 next_used: cp_model.IntVar) -> None:
        """Padding of a line as alignment gaps: a gap after unit u and before unit v is
        less than a_v, a multiple of a_u, so its bit 2^j is set only if a_u <= 2^j < a_v.
        Each unit ends at most one gap and starts at most one; u has bytes in the line,
        v too or starts the next line."""
        levels = []
        j = 1
        while j < self.big:
            low = [n for a, n in units if a <= j]
            high = [n for a, n in units if a > j]
            b = self._int(0, self.p.line // j, f"gapbits{j}")
            self.m.add(b <= (sum(low) if low else 0))
            self.m.add(b <= (sum(high) if high else 0) + next_used)
            levels.append(j * b)
            j *= 2
        self.m.add(pad == (sum(levels) if levels else 0))

    def _build_split(self, u: int, load: list[list[cp_model.LinearExprT]],
                     gaps: list[list[tuple[int, cp_model.LinearExprT]]]) -> None:
        """A unit that may cross lines: chunks of its alignment per line, in a run of
        consecutive lines, full lines in the middle of the run."""
        m = self.m
        unit = self.p.units[u]
        size, gran = unit.size, unit.align
        xs = []
        for ell in range(self.nlines):
            most = min(size, self.cap[ell]) // gran
            if most <= 0:
                continue
            k, x = self._count(most, f"k{u}_{ell}", f"x{u}_{ell}")
            self.k[(u, ell)] = k
            self.x[(u, ell)] = x
            xs.append((ell, x))
            load[ell].append(gran * k)
            gaps[ell].append((gran, x))
        m.add(sum(gran * self.k[(u, ell)] for ell, _ in xs) == size)
        starts = []
        prev: cp_model.IntVar | None = None
        prev_ell = -2
        for ell, x in xs:
            if prev is None or prev_ell != ell - 1:
                starts.append(x)
            else:
                st = self._int(0, 1, f"st{u}_{ell}")
                m.add(st >= x - prev)
                starts.append(st)
                c = self._int(0, 1, f"c{u}_{ell - 1}")
                m.add(c >= x + prev - 1)
                m.add(c <= x)
                m.add(c <= prev)
                self.cross[(u, ell - 1)] = c
            prev, prev_ell = x, ell
        m.add(sum(starts) <= 1)
        for ell, _ in xs:
            before, after = self.cross.get((u, ell - 1)), self.cross.get((u, ell))
            if before is not None and after is not None:
                m.add(gran * self.k[(u, ell)] == self.cap[ell]).only_enforce_if(
                    [before, after])

    def _rank(self) -> list[int]:
        """Hot items by decreasing weight of the footprints holding them (ties: item)."""
        weight: dict[int, int] = {}
        for fp in self.p.lines_fp:
            for i in {self.item_of[u] for u in fp.units}:
                weight[i] = weight.get(i, 0) + fp.weight
        return sorted(weight, key=lambda i: (-weight[i], i))[:MASK_ITEMS]

    def _mask(self, present: set[int]) -> int:
        top = len(self.rank) - 1
        return sum(1 << (top - r) for r, i in enumerate(self.rank) if i in present)

    def _symmetry(self) -> None:
        """Two adjacent full lines that no unit enters or leaves can swap contents
        (padding included): keep only solutions where the first holds the larger set of
        hot items (read as a binary number, heaviest item highest; only the MASK_ITEMS
        heaviest items count, ties are allowed). Sorting a run of such
        lines by adjacent swaps reaches this form without changing any constraint or
        cost."""
        top = len(self.rank) - 1
        masks = []
        for ell in range(self.nlines):
            terms = [(1 << (top - r)) * self.x[(i, ell)] for r, i in enumerate(self.rank)
                     if (i, ell) in self.x]
            masks.append(sum(terms) if terms else 0)
        for ell in range(self.nlines - 2):
            if isinstance(masks[ell], int) and isinstance(masks[ell + 1], int):
                continue
            cond = [self.used[ell + 2]]
            for b in (ell - 1, ell, ell + 1):
                cond += [self.cross[(u, b)].Not() for u in self.split if (u, b) in self.cross]
            self.m.add(masks[ell] >= masks[ell + 1]).only_enforce_if(cond)

    def _objective(self, fps: tuple[WeightedFootprint, ...]) -> cp_model.LinearExprT:
        p = self.p
        terms: list[cp_model.LinearExprT] = []
        for fp in fps:
            items = sorted({self.item_of[u] for u in fp.units})
            ys = []
            for ell in range(self.nlines):
                xs = [self.x[(i, ell)] for i in items if (i, ell) in self.x]
                if not xs:
                    continue
                y = self._int(0, 1, f"y{ell}")
                for x in xs:
                    self.m.add_implication(x, y)
                ys.append(y)
            need = -(-sum(p.units[u].size for u in fp.units) // p.line)
            if ys and need > 0:
                self.m.add(sum(ys) >= need)
            if ys:
                terms.append(fp.weight * sum(ys))
        return sum(terms) if terms else 0

    def at_least(self, lines: int) -> None:
        """Add a known lower bound on the lines objective (from a relaxation of this one)."""
        if not isinstance(self.lines_expr, int):
            self.m.add(self.lines_expr >= lines)

    def dirty_at_least(self, dirty: int) -> None:
        """Add a known lower bound on the dirty objective (valid once the lines are fixed
        at the value it was proven for)."""
        if not isinstance(self.dirty_expr, int):
            self.m.add(self.dirty_expr >= dirty)

    # ------------------------------------------------------------------ hints

    def hint(self, offsets: list[int] | tuple[int, ...]) -> None:
        """Hint the line contents of a C placement (a solution of the model), with runs of
        interchangeable lines sorted as the symmetry constraints require."""
        if not self._hint_contents(offsets):
            return
        # Complete the hint (crossings, line flags, footprint lines) by propagation, so
        # that the search starts from it.
        solver = new_solver()
        solver.parameters.num_workers = 1
        solver.parameters.fix_variables_to_their_hinted_value = True
        solver.parameters.max_deterministic_time = 0.2
        if solver.solve(self.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            hint_values(self.m, self._vars,
                        {v.index: int(solver.value(v)) for v in self._vars})

    def layout_value(self, offsets: list[int] | tuple[int, ...]) -> int | None:
        """The lines objective of the model's solution for a C placement, None if the
        placement is not a solution (for tests: every C layout must be one)."""
        if not self._hint_contents(offsets):
            return None
        self.m.minimize(self.lines_expr)
        solver = new_solver()
        solver.parameters.num_workers = 1
        solver.parameters.fix_variables_to_their_hinted_value = True
        solver.parameters.max_deterministic_time = 5.0
        status = solver.solve(self.m)
        self.m.clear_hints()
        if status != cp_model.OPTIMAL:
            return None
        return int(round(solver.objective_value))

    def _hint_contents(self, offsets: list[int] | tuple[int, ...]) -> bool:
        p, line = self.p, self.p.line
        self.m.clear_hints()
        bytes_in: list[dict[int, int]] = [{} for _ in range(self.nlines)]
        for unit in p.units:
            b, e = offsets[unit.index], offsets[unit.index] + unit.size
            for ell in range(b // line, min(self.nlines, (e - 1) // line + 1)):
                bytes_in[ell][unit.index] = min(e, (ell + 1) * line) - max(b, ell * line)
        if any(sum(here.values()) > self.cap[ell] for ell, here in enumerate(bytes_in)):
            return False
        crossing = [any(u in bytes_in[ell + 1] for u in bytes_in[ell])
                    for ell in range(self.nlines - 1)] + [False, False]
        last = max(ell for ell, here in enumerate(bytes_in) if here)

        def mask(ell: int) -> int:
            return self._mask({self.item_of[u] for u in bytes_in[ell] if u in p.hot})

        changed = True
        while changed:
            changed = False
            for ell in range(last - 1):
                if crossing[ell] or crossing[ell + 1] or (ell and crossing[ell - 1]):
                    continue
                if mask(ell) < mask(ell + 1):
                    bytes_in[ell], bytes_in[ell + 1] = bytes_in[ell + 1], bytes_in[ell]
                    changed = True
        for ell, here in enumerate(bytes_in):
            for g, key in enumerate(self.groups):
                if (g, ell) in self.n:
                    count = sum(1 for u in self.rigid[key] if u in here)
                    self.m.add_hint(self.n[(g, ell)], count)
                    self.m.add_hint(self.x[(-1 - g, ell)], int(count > 0))
            for u in self.split:
                if (u, ell) in self.k:
                    self.m.add_hint(self.k[(u, ell)], here.get(u, 0) // p.units[u].align)
                    self.m.add_hint(self.x[(u, ell)], int(u in here))
            if ell in self.pad:
                self.m.add_hint(self.pad[ell], self.cap[ell] - sum(here.values())
                                if ell < last else 0)
        return True

    # ------------------------------------------------------------------ solving

    def _stage(self, name: str, expr: cp_model.LinearExprT, det: float
               ) -> tuple[StageOutcome, float]:
        # CP-SAT's presolve loses the hint on this model (seen with OR-Tools 9.x): the
        # search would not start from the best known layout.
        outcome, used, values = solve_stage(self.m, name, expr, self._vars, det,
                                            presolve=False)
        self.last_det = used
        if values is not None:
            self._values = values
        return outcome, used

    def solve(self, det_budget: float) -> FillSolution | None:
        """Minimise lines, then dirty lines, then the padding before the last line (a
        smaller record), each stage keeping the previous value."""
        padding = sum(self.pad.values()) if self.pad else 0
        done, found, det_used, seconds = run_stages(
            self._stage, (("lines", self.lines_expr, 0.85), ("dirty", self.dirty_expr, 0.7),
                          ("padding", padding, 1.0)),
            det_budget, lambda: self._values)
        if not found:
            return None
        return FillSolution(done, seconds, det_used, list(reversed(found)))

    def another(self, values: dict[int, int], det: float,
                expr: cp_model.LinearExprT | None = None) -> dict[int, int] | None:
        """A further solution no worse than the earlier stages allowed, with another set of
        (item, line) presences than `values` (for one that can be realised), minimising
        `expr` (default: lines). The exclusion is not a valid constraint for bounds: after
        this, use no bound."""
        xs = list(self.x.values())
        self.m.add(sum(1 - x if values[x.index] else x for x in xs) >= 1)
        self.m.clear_hints()
        out, _ = self._stage("retry", self.lines_expr if expr is None else expr, det)
        return self._values if out.value is not None else None

    # ------------------------------------------------------------------ realising

    def contents(self, values: dict[int, int]
                 ) -> tuple[list[list[int]], dict[int, tuple[int, int]], int]:
        """Per line the units lying wholly in it; the units crossing out of a line
        (line -> (unit, bytes in that line)); the last used line."""
        p = self.p
        whole: list[list[int]] = [[] for _ in range(self.nlines)]
        for g, key in enumerate(self.groups):
            pool = list(self.rigid[key])  # original order
            for ell in range(self.nlines):
                n = self.n.get((g, ell))
                count = values[n.index] if n is not None else 0
                whole[ell] += pool[:count]
                pool = pool[count:]
        leaving: dict[int, tuple[int, int]] = {}
        for u in self.split:
            lines = [ell for ell in range(self.nlines)
                     if (u, ell) in self.x and values[self.x[(u, ell)].index]]
            if len(lines) == 1:
                whole[lines[0]].append(u)
            else:
                first = lines[0]
                leaving[first] = (u, values[self.k[(u, first)].index] * p.units[u].align)
        last = max(ell for ell in range(self.nlines) if values[self.used[ell].index])
        return whole, leaving, last

    def realize(self, values: dict[int, int]) -> list[int] | None:
        """A declaration order whose C placement has exactly the line contents of
        `values`, or None if none was found (see the module docstring)."""
        whole, leaving, last = self.contents(values)
        return realize_lines(self.p, whole, leaving, last)


def realize_lines(problem: LayoutProblem, whole: list[list[int]],
                  leaving: dict[int, tuple[int, int]], last: int) -> list[int] | None:
    """An order placing the units of `whole[l]` inside line l and each unit of
    `leaving[l] = (u, h)` at h bytes before the end of line l, nothing after line `last`;
    None if there is none (or the search took more than REALIZE_STEPS steps)."""
    p, line = problem, problem.line
    steps = [0]
    covered: set[int] = set()  # lines in the middle of a crossing unit
    arrive: dict[int, int] = {}  # line -> end of the unit crossing into it
    for ell, (u, h) in leaving.items():
        end = (ell + 1) * line - h + p.units[u].size
        arrive[(end - 1) // line] = end
        covered.update(range(ell + 1, (end - 1) // line))
    failed: set[tuple[int, int]] = set()

    def line_orders(ell: int, cursor: int) -> list[tuple[int, list[int]]]:
        """(end, units) for the orders of line `ell`'s units from `cursor`."""
        lo, hi = ell * line, min((ell + 1) * line, p.size_limit)
        kinds: dict[tuple[int, int], list[int]] = {}
        for u in sorted(whole[ell], key=lambda u: (p.units[u].offset, u)):
            kinds.setdefault((p.units[u].size, p.units[u].align), []).append(u)
        keys = sorted(kinds, key=lambda k: (-k[1], -k[0]))
        out_unit = leaving.get(ell)
        results: dict[int, list[tuple[int, int]]] = {}
        seen: set[tuple[int, tuple[int, ...]]] = set()

        def dfs(cur: int, counts: tuple[int, ...], seq: list[tuple[int, int]]) -> None:
            steps[0] += 1
            if steps[0] > REALIZE_STEPS or (cur, counts) in seen:
                return
            seen.add((cur, counts))
            if not any(counts):
                if out_unit is not None:
                    u, h = out_unit
                    at = align_up(cur, p.units[u].align)
                    if at == (ell + 1) * line - h and at >= lo:
                        end = at + p.units[u].size
                        results.setdefault(end, list(seq))
                elif cur <= hi:
                    results.setdefault(cur, list(seq))
                return
            for i, (size, align) in enumerate(keys):
                if counts[i]:
                    at = align_up(cur, align)
                    if at < lo or at + size > hi:
                        continue
                    seq.append((i, at))
                    dfs(at + size, counts[:i] + (counts[i] - 1,) + counts[i + 1:], seq)
                    seq.pop()

        dfs(cursor, tuple(len(kinds[k]) for k in keys), [])
        out = []
        for end, seq in sorted(results.items(), key=lambda kv: -kv[0]):
            pools = {k: list(kinds[k]) for k in keys}
            units = [pools[keys[i]].pop(0) for i, _ in seq]
            if out_unit is not None:
                units.append(out_unit[0])
            out.append((end, units))
        return out

    def go(ell: int, cursor: int) -> list[int] | None:
        if ell > last:
            return []
        if ell in covered:
            return go(ell + 1, cursor)
        if (ell, cursor) in failed:
            return None
        if ell in arrive and cursor != arrive[ell]:
            return None
        for end, units in line_orders(ell, cursor):
            rest = go(ell + 1, end)
            if rest is not None:
                return units + rest
        failed.add((ell, cursor))
        return None

    order = go(0, 0)
    if order is None or sorted(order) != list(range(len(p.units))):
        return None
    return order


def fill_orders(problem: LayoutProblem, offsets: list[int] | tuple[int, ...] | None,
                known: int | None, det: float,
                dirty_floor: tuple[int, int] | None = None
                ) -> tuple[list[list[int]], list[StageOutcome], float]:
    """Run the model (hinted with `offsets`, told the lower bound `known` on lines): the
    orders realising its solutions, its stage outcomes (valid bounds) and the
    deterministic time used.

    Lines first (LINES_SHARE of the budget). Only when that stage proves its value are the
    later stages worth anything (an order of merely better lines is not proven optimal):
    if its solution has no C order, further solutions of the same value are asked for
    (`another`, at most RETRIES, half of what is left each) until one is realised; then
    dirty lines and padding. `dirty_floor = (lines, dirty)` is a lower bound on dirty
    lines among layouts of at most `lines` lines, from another relaxation (the class
    model's dirty stage): when the lines optimum is that value, the dirty stage stops as
    soon as it reaches the floor instead of spending its budget on a proof. After a retry
    the model holds cuts that are not valid for bounds, so the dirty stage's bound is
    reported only when it is the floor, reached."""
    model = LineFillModel(problem)
    if known is not None:
        model.at_least(known)
    if offsets is not None:
        model.hint(offsets)
    used = 0.0

    def left() -> float:
        return det - used

    lines, step = model._stage("lines", model.lines_expr, det * LINES_SHARE)
    used += step
    values = model._values
    if lines.value is None or values is None:
        return [], [lines] if lines.bound is not None else [], used
    stages = [lines]
    orders: list[list[int]] = []
    if (order := model.realize(values)) is not None:
        orders.append(order)
    if lines.value != lines.bound:
        return orders, stages, used
    cut = False
    for _ in range(RETRIES):
        det_left = left()
        if orders or det_left <= 0.01:
            break
        # The lines optimum is proven but this solution has no C order: another solution
        # of the same value, with another pattern of line contents.
        again = model.another(values, det_left / 2)
        used += model.last_det or 0.0
        cut = True
        if again is None:
            break
        values = again
        if (order := model.realize(values)) is not None:
            orders.append(order)
    if not orders:
        return orders, stages, used
    floor = dirty_floor[1] if dirty_floor is not None and dirty_floor[0] == lines.value \
        else None
    if floor is not None:
        model.dirty_at_least(floor)
    padding = sum(model.pad.values()) if model.pad else 0
    for name, expr, share in (("dirty", model.dirty_expr, 0.7), ("padding", padding, 0.5)):
        det_left = left()
        if det_left <= 0.005:
            break
        before = model._values
        out, step = model._stage(name, expr, det_left * share)
        used += step
        if name == "dirty":
            if cut and not (floor is not None and out.value == floor):
                out = StageOutcome(out.name, out.status, out.value, None)
            stages.append(out)
        values = model._values
        if out.value is None or values is None:
            break
        if values == before:
            continue  # the stage kept the solution it was hinted with (realised)
        if (order := model.realize(values)) is not None:
            orders.insert(0, order)
            continue
        for _ in range(RETRIES if name == "padding" else 0):
            # a smaller record whose line contents have no C order: look further
            det_left = left()
            if det_left <= 0.01:
                break
            again = model.another(values, det_left / 2, expr)
            used += model.last_det or 0.0
            if again is None:
                break
            values = again
            if (order := model.realize(values)) is not None:
                orders.insert(0, order)
                break
    return orders, stages, used
