"""CP-SAT line-assignment relaxation for objects that start on a cache-line boundary.

Each hot unit is assigned to cache lines (bins of `line` bytes, less the bytes of the fixed
area and pinned units). A unit that can straddle a line boundary (size larger than its
alignment, or than a line) may spread its bytes over up to ceil(size / line) + 1 lines; any
other unit sits in one line. Footprint f occupies line l when one of its units has bytes
there. Every C layout of an aligned object is such an assignment (alignment padding, order,
contiguity, cold units and side/first constraints are dropped), so the optimum is a valid
lower bound on the lines (then, among those, on the dirty lines). Free lines are
interchangeable, so at most as many are modelled as the units could use, and used free lines
come first.

With `classes=True`, hot units with the same signature (the same footprints, for lines and
for dirty lines) form one item whose bytes may be spread over lines at will (a "fluid"
item, at least one byte per line it uses). Every footprint holding one of them holds all of
them, so the cost depends only on the set of lines the class uses; any assignment of the
units maps to a fluid assignment of the class with the same cost, so the optimum is still a
lower bound, and the model is much smaller when fields are touched in groups.

The fluid classes can have optima that no C layout reaches (a class's bytes in a line
that no choice of its members adds up to, or a member split over three lines; 60 fields /
40 touched seeds 110 and 127): the dirty bound is then too low to prove anything. With
`tight=True` as well, a class's bytes in a line are restricted to what its members can
add up to (`_sums`) and shared out among them, counted per kind of member (`_members`),
with at most two split members per line. Every C layout still satisfies it, so the
optimum is still a lower bound; the model is larger, so the optimizer runs it only when
the plain class model's optimum cannot be arranged.

The solution also gives target offsets (`targets`) for `realize`. This module neither
realises orders nor applies to objects that may start inside a line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ortools.sat.python import cp_model

from cachefit.layout.cpsat_model import StageOutcome, run_stages, solve_stage
from cachefit.layout.line_cost import fixed_lines
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, align_up

BOTH_WAYS_MAX_UNITS = 128
"""The class model ties a footprint's line to its items both ways (`_objective`) on records
of at most this many units."""
LEX_BITS = 48   # items in the symmetry-breaking binary number of a free line (see _lex_masks)


def part_step(size: int, align: int, line: int) -> int:
    """A part of a unit split by a line boundary is a multiple of this many bytes: its
    alignment (the boundary and the unit's offset both are multiples of it, when it
    divides the line), or 1 when that cannot be said (a size that is not a multiple of the
    alignment, or an alignment that does not divide the line)."""
    return 1 if size % align or line % align else align


def max_lines(size: int, align: int, line: int) -> int:
    """The most lines a unit of `size` bytes and alignment `align` can touch in C: its
    whole lines, plus one when it can straddle a boundary (larger than its alignment, or
    than a line)."""
    k = -(-size // line)
    return k + 1 if size > align or size > line else k


@dataclass
class LineSolution:
    """Lines (with bytes) per hot unit, and the stage outcomes (values and bounds)."""

    lines: dict[int, list[tuple[int, int]]]
    stages: list[StageOutcome]
    seconds: float
    det_used: float = 0.0
    earlier: tuple[dict[int, list[tuple[int, int]]], ...] = ()
    """Assignments found by earlier stages (e.g. lines-optimal before the dirty stage
    moved things): more targets to realise."""

    def stage(self, name: str) -> StageOutcome | None:
        return next((s for s in self.stages if s.name == name), None)


class LineModel:
    def __init__(self, problem: LayoutProblem, classes: bool = False,
                 contiguous: bool = False, tight: bool = False) -> None:
        if problem.starts != (0,):
            raise ValueError("the line model needs objects aligned on cache lines")
        self.p = problem
        line = problem.line
        hot = sorted((u for u in problem.hot if not problem.units[u].fixed),
                     key=lambda u: (problem.units[u].offset, u))
        total_lines = max(1, problem.size_limit // line)
        fixed_bytes = [0] * total_lines
        spans = [(0, problem.prefix_end)] if problem.prefix_end else []
        spans += [(u.offset, u.offset + u.size) for u in problem.units if u.fixed and u.size]
        for b, e in spans:
            for ell in range((b // line), min(total_lines, (e - 1) // line + 1)):
                fixed_bytes[ell] += max(0, min(e, (ell + 1) * line) - max(b, ell * line))
        unit_kmax: dict[int, int] = {}
        for u in hot:
            unit = problem.units[u]
            unit_kmax[u] = max_lines(unit.size, unit.align, line)
        # Items: one per hot unit, or one per signature class (see the module doc).
        groups: dict[object, list[int]] = {}
        for u in hot:
            key: object = u
            if classes and problem.units[u].size:
                key = (tuple(i for i, fp in enumerate(problem.lines_fp) if u in fp.units),
                       tuple(i for i, fp in enumerate(problem.dirty_fp) if u in fp.units))
            groups.setdefault(key, []).append(u)
        self.members: dict[int, list[int]] = {}
        self.group_of: dict[int, int] = {}
        self.size: dict[int, int] = {}
        self.kmax: dict[int, int] = {}
        self.fluid: set[int] = set()
        self.min_bytes: dict[int, int] = {}
        for members in groups.values():
            g = members[0]
            self.members[g] = members
            for u in members:
                self.group_of[u] = g
            self.size[g] = sum(problem.units[u].size for u in members)
            self.kmax[g] = sum(unit_kmax[u] for u in members)
            if len(members) > 1:
                self.fluid.add(g)
            self.min_bytes[g] = min(1 if unit_kmax[u] > 1 else max(problem.units[u].size, 1)
                                    for u in members)
        self.items = list(self.members)
        reserved = [ell for ell in range(total_lines) if fixed_bytes[ell]]
        free = [ell for ell in range(total_lines) if not fixed_bytes[ell]]
        if not (contiguous and not classes and reserved):
            # Used free lines can be moved to the front keeping their order (so units
            # spread over consecutive lines stay so) — unless a reserved line is in
            # between, so the contiguous model keeps every line when there are any.
            free = free[:sum(self.kmax.values())]
        self.lines = sorted(reserved + free)
        self.free = free
        self.capacity = {ell: line - fixed_bytes[ell] for ell in self.lines}
        for g in self.items:
            self.kmax[g] = min(self.kmax[g], len(self.lines))
        self.contiguous = contiguous and not classes
        self.tight = tight
        self.m = cp_model.CpModel()
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}
        self.q: dict[tuple[int, int], cp_model.LinearExprT] = {}
        self.qvar: dict[tuple[int, int], cp_model.IntVar] = {}  # bytes of splittable items
        self.step: dict[int, int] = {g: self._step(g) for g in self.items}  # ... in steps
        self._vars: list[cp_model.IntVar] = []
        self._build()
        # the class model ties a footprint's line to its items both ways (see _objective)
        self._both_ways = classes and len(problem.units) <= BOTH_WAYS_MAX_UNITS
        self.lines_expr = self._objective(problem.lines_fp)
        self.dirty_expr = self._objective(problem.dirty_fp)
        self._values: dict[int, int] | None = None

    def _step(self, g: int) -> int:
        """The bytes of item `g` in any line are a multiple of this: the greatest common
        divisor of its members' `part_step`s (whole members are multiples of theirs too)."""
        step = 0
        for u in self.members[g]:
            unit = self.p.units[u]
            step = math.gcd(step, part_step(unit.size, unit.align, self.p.line))
        return max(step, 1)

    def _sums(self, g: int) -> list[int]:
        """The byte counts class `g` can have in one line (at most a line): sums of one
        choice per member, none of it, all of it (if it fits a line) or, if it can
        straddle a boundary, a part that is a multiple of its alignment (`part_step`)."""
        line = self.p.line
        step = self.step[g]
        reach = 1   # bit b: b bytes reachable
        mask = (1 << (line + 1)) - 1
        for u in self.members[g]:
            unit = self.p.units[u]
            choices = {unit.size} if unit.size <= line else set()
            if max_lines(unit.size, unit.align, line) > 1:
                piece = part_step(unit.size, unit.align, line)
                choices.update(range(piece, min(unit.size - 1, line) + 1, piece))
            nxt = reach
            for c in choices:
                nxt |= reach << c
            reach = nxt & mask
        return [b for b in range(line + 1) if reach >> b & 1 and b % step == 0]

    def _bool(self, name: str) -> cp_model.IntVar:
        v = self.m.new_bool_var(name)
        self._vars.append(v)
        return v

    def _build(self) -> None:
        for u in self.items:
            size = self.size[u]
            xs = []
            for ell in self.lines:
                if size > self.capacity[ell] and self.kmax[u] == 1:
                    continue
                if self.min_bytes[u] > self.capacity[ell]:
                    continue
                x = self._bool(f"x{u}_{ell}")
                self.x[(u, ell)] = x
                xs.append((ell, x))
            if self.kmax[u] == 1:
                self.m.add_exactly_one(x for _, x in xs)
                for ell, x in xs:
                    self.q[(u, ell)] = size * x
            else:
                qs = []
                step = self.step[u]
                sums = self._sums(u) if u in self.fluid and self.tight else None
                for ell, x in xs:
                    cap = min(size, self.capacity[ell])
                    if sums is None:
                        k = self.m.new_int_var(0, cap // step, f"q{u}_{ell}")
                    else:
                        k = self.m.new_int_var_from_domain(cp_model.Domain.from_values(
                            [b // step for b in sums if b <= cap]), f"q{u}_{ell}")
                    self._vars.append(k)
                    q = step * k if step > 1 else k
                    self.m.add(q <= cap * x)
                    self.m.add(q >= self.min_bytes[u]).only_enforce_if(x)
                    self.q[(u, ell)] = q
                    self.qvar[(u, ell)] = k
                    qs.append(q)
                self.m.add(sum(qs) == size)
                self.m.add(sum(x for _, x in xs) <= self.kmax[u])
        for ell in self.lines:
            terms = [self.q[(u, ell)] for u in self.items if (u, ell) in self.q]
            if terms:
                self.m.add(sum(terms) <= self.capacity[ell])
        if self.tight and self.fluid:
            self._members()
        # Symmetry: free lines are interchangeable (same capacity, nothing fixed in them),
        # so only layouts whose free lines are sorted by the set of items they hold are
        # kept: read as a binary number with the heaviest item as the highest bit, each
        # free line's set is at least the next one's (any solution can be relabelled so,
        # and an empty line, 0, comes last). Heaviest first makes the order decide early.
        if self.contiguous:
            self._contiguity()
            return
        self.masks = self._lex_masks()
        for a, b in zip(self.masks, self.masks[1:], strict=False):
            self.m.add(a >= b)
        # Used free lines come first (implied by the order above; helps propagation).
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

    def _members(self) -> None:
        """Share each fluid class's bytes in a line out among its members, counted per
        kind of member (size, alignment): whole members, and the parts of split members.
        A split member has two end parts (its first and last lines; each a multiple of
        its alignment, `part_step`) and, if it is larger than a line, full lines in
        between, which hold nothing else. A line holds parts of at most two split
        members (one across its start, one across its end, or one across both). Every C
        layout satisfies this, so the optimum is still a lower bound."""
        line = self.p.line
        pieces_in: dict[int, list[cp_model.IntVar]] = {}
        for g in self.items:
            if g not in self.fluid:
                continue
            kinds: dict[tuple[int, int], int] = {}
            for u in self.members[g]:
                unit = self.p.units[u]
                kinds[(unit.size, unit.align)] = kinds.get((unit.size, unit.align), 0) + 1
            per_line: dict[int, list[cp_model.LinearExprT]] = {}
            for (size, align), n in sorted(kinds.items()):
                kmax = max_lines(size, align, line)
                piece = part_step(size, align, line)
                wholes, ends, end_bytes, fulls = [], [], [], []
                split = self.m.new_int_var(0 if size <= line else n, n if kmax > 1 else 0,
                                           f"s{g}_{size}_{align}")
                self._vars.append(split)
                for ell in self.lines:
                    if (g, ell) not in self.q:
                        continue
                    here: list[cp_model.LinearExprT] = []
                    if size <= self.capacity[ell]:
                        w = self.m.new_int_var(0, n, f"w{g}_{size}_{ell}")
                        self._vars.append(w)
                        wholes.append(w)
                        here.append(size * w)
                    if kmax > 1:
                        most = min(size - piece, line)
                        c = self.m.new_int_var(0, min(2, 2 * n), f"c{g}_{size}_{ell}")
                        k = self.m.new_int_var(0, 2 * most // piece, f"p{g}_{size}_{ell}")
                        self._vars += [c, k]
                        self.m.add(k >= c)
                        self.m.add(piece * k <= most * c)
                        ends.append(c)
                        end_bytes.append(piece * k)
                        here.append(piece * k)
                        pieces_in.setdefault(ell, []).append(c)
                    if size > line and self.capacity[ell] == line:
                        f = self.m.new_bool_var(f"f{g}_{size}_{ell}")
                        self._vars.append(f)
                        fulls.append(f)
                        here.append(line * f)
                        pieces_in.setdefault(ell, []).append(f)
                    per_line.setdefault(ell, []).extend(here)
                self.m.add(sum(wholes) == n - split)
                if kmax > 1:
                    self.m.add(sum(ends) == 2 * split)
                    self.m.add(sum(end_bytes) + line * sum(fulls) == size * split)
            for ell, terms in per_line.items():
                self.m.add(self.q[(g, ell)] == sum(terms))
        for counts in pieces_in.values():
            if len(counts) > 2:
                self.m.add(sum(counts) <= 2)

    def _contiguity(self) -> None:
        """A unit spread over several lines uses consecutive ones (at most one line where
        it starts). Lines are then no longer interchangeable: no symmetry breaking."""
        for u in self.items:
            if self.kmax[u] <= 1:
                continue
            prev: cp_model.IntVar | None = None
            starts = []
            for ell in self.lines:
                x = self.x.get((u, ell))
                if x is None:
                    prev = None
                    continue
                if prev is None:
                    starts.append(x)
                else:
                    st = self._bool(f"st{u}_{ell}")
                    self.m.add(st >= x - prev)
                    starts.append(st)
                prev = x
            self.m.add(sum(starts) <= 1)

    def _lex_rank(self) -> list[int]:
        """Items by decreasing weight of the footprints holding them (ties: item id)."""
        weight = dict.fromkeys(self.items, 0)
        for fp in self.p.lines_fp:
            for g in {self.group_of[u] for u in fp.units if u in self.group_of}:
                weight[g] += fp.weight
        return sorted(self.items, key=lambda g: (-weight[g], g))

    def _lex_masks(self) -> list[cp_model.LinearExprT]:
        # CP-SAT's coefficients are 64-bit integers: only the heaviest LEX_BITS items form
        # the binary number (a record with 80 field classes made 2^79 a float and the model
        # raised). Ties on that prefix are allowed by `>=`, so any solution can still be
        # relabelled to satisfy it, and the used-lines-first rule below stays valid.
        rank = self._lex_rank()[:LEX_BITS]
        top = len(rank) - 1
        masks = []
        for ell in self.free:
            terms = [(1 << (top - k)) * self.x[(g, ell)] for k, g in enumerate(rank)
                     if (g, ell) in self.x]
            masks.append(sum(terms) if terms else 0)
        return masks

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
                groups = sorted({self.group_of[u] for u in fp.units if u in self.group_of})
                xs = [self.x[(g, ell)] for g in groups if (g, ell) in self.x]
                if not xs:
                    continue
                y = self._bool(f"y{ell}")
                for x in xs:
                    self.m.add_implication(x, y)
                if self._both_ways:
                    # y only if one of them is there: the same optimum, which the class
                    # model proves sooner (60 / 40 cache-aligned seeds 42, 65, 113; the
                    # unit models tied so lost seed 0: bench/solver/RESULTS.md, session 15)
                    self.m.add_bool_or(xs).only_enforce_if(y)
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
        """Hint the assignment induced by a placement (valid for the relaxation), with its
        free lines relabelled into the order the symmetry constraints keep."""
        line = self.p.line
        self.m.clear_hints()
        inside: dict[tuple[int, int], int] = {}
        for g in self.items:
            for u in self.members[g]:
                b = offsets[u]
                size = self.p.units[u].size
                for ell in range(b // line, (b + max(size, 1) - 1) // line + 1):
                    lo, hi = max(b, ell * line), min(b + size, (ell + 1) * line)
                    if hi > lo:
                        inside[(g, ell)] = inside.get((g, ell), 0) + hi - lo
        rank = self._lex_rank()
        top = len(rank) - 1

        def mask(ell: int) -> int:
            return sum(1 << (top - k) for k, g in enumerate(rank) if (g, ell) in inside)

        touched = sorted({ell for _, ell in inside})
        moving = [ell for ell in touched if ell in self.free]
        if not self.contiguous and all(ell in self.capacity for ell in touched) and \
                len(moving) <= len(self.free):
            # sorted() is stable: equal sets keep their order
            relabel = dict(zip(sorted(moving, key=lambda e: -mask(e)), self.free,
                               strict=False))
            inside = {(g, relabel.get(ell, ell)): n for (g, ell), n in inside.items()}
        for g in self.items:
            for ell in self.lines:
                here = inside.get((g, ell), 0)
                if (g, ell) in self.x:
                    self.m.add_hint(self.x[(g, ell)], int(here > 0))
                if (g, ell) in self.qvar:
                    self.m.add_hint(self.qvar[(g, ell)], here // self.step[g])

    def at_least(self, lines: int) -> None:
        """Add a known lower bound on the lines objective (from a relaxation of this one)."""
        if not isinstance(self.lines_expr, int):
            self.m.add(self.lines_expr >= lines)

    def lines_reached(self, lines: int, dirty_floor: int | None) -> None:
        """`lines`, a relaxation's lines bound, is reached by a layout, so it is the
        optimum: fix the lines objective there, and bound the dirty lines below by that
        relaxation's dirty bound (at the same lines)."""
        if not isinstance(self.lines_expr, int):
            self.m.add(self.lines_expr == lines)
        if dirty_floor is not None and not isinstance(self.dirty_expr, int):
            self.m.add(self.dirty_expr >= dirty_floor)

    def _stage(self, name: str, expr: cp_model.LinearExprT, det: float
               ) -> tuple[StageOutcome, float]:
        outcome, used, values = solve_stage(self.m, name, expr, self._vars, det)
        if values is not None:
            self._values = values
        return outcome, used

    def solve(self, det_budget: float) -> LineSolution | None:
        stages, found, det_used, seconds = run_stages(
            self._stage, (("lines", self.lines_expr, 0.75), ("dirty", self.dirty_expr, 1.0)),
            det_budget, lambda: self._values)
        if self._values is None:
            return None
        assignments = [self._assignment(values) for values in reversed(found)]
        return LineSolution(assignments[0], stages, seconds, det_used, tuple(assignments[1:]))

    def resume_dirty(self, solution: LineSolution, det_budget: float
                     ) -> LineSolution | None:
        """Go on with the dirty stage of `solution` (this model's, its lines stage proven,
        its dirty stage not), starting from its bound and its best solution (the hint):
        the same stages, with the dirty one's new outcome, and only the new solution (not
        `solution`'s earlier ones), or None if nothing was found."""
        lines, dirty = solution.stage("lines"), solution.stage("dirty")
        if lines is None or not lines.optimal or dirty is None or dirty.bound is None or \
                isinstance(self.dirty_expr, int):
            return None
        self.m.add(self.dirty_expr >= dirty.bound)
        outcome, used = self._stage("dirty", self.dirty_expr, det_budget)
        if outcome.value is None or self._values is None:
            return None
        return LineSolution(self._assignment(self._values), [lines, outcome],
                            solution.seconds, used)

    def _assignment(self, values: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
        """Lines (with bytes) per hot unit in the solution `values`."""
        per_item: dict[int, list[tuple[int, int]]] = {}
        for (g, ell), x in self.x.items():
            if values[x.index]:
                q = self.qvar.get((g, ell))
                nbytes = values[q.index] * self.step[g] if q is not None else self.size[g]
                per_item.setdefault(g, []).append((ell, nbytes))
        lines: dict[int, list[tuple[int, int]]] = {}
        for g, parts in per_item.items():
            if g in self.fluid:
                lines.update(self._spread(g, sorted(parts)))
            else:
                lines[g] = parts
        return lines

    def _spread(self, g: int, parts: list[tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
        """Share a class's bytes per line among its units (largest alignment first; a unit
        that fits nowhere whole takes the rest of a line and continues in the next)."""
        p = self.p
        room = dict(parts)
        order = [ell for ell, _ in parts]
        out: dict[int, list[tuple[int, int]]] = {}
        for u in sorted(self.members[g], key=lambda u: (-p.units[u].align,
                                                          -p.units[u].size, u)):
            size = p.units[u].size
            home = next((ell for ell in order if room[ell] >= size), None)
            if home is not None:
                room[home] -= size
                out[u] = [(home, size)]
                continue
            left, pieces = size, []
            for ell in order:
                if left and room[ell]:
                    take = min(room[ell], left)
                    room[ell] -= take
                    left -= take
                    pieces.append((ell, take))
            if left or not pieces:
                pieces.append((order[-1], left or size))
            out[u] = pieces
        return out

    def targets(self, solution: LineSolution,
                lines: dict[int, list[tuple[int, int]]] | None = None) -> dict[int, int]:
        """Offsets placing every unit in (or from) its first line; straddlers last in it
        (for `solution`'s assignment, or for `lines`, one of its earlier ones)."""
        p = self.p
        line = p.line
        assignment = solution.lines if lines is None else lines
        busy: list[tuple[int, int]] = [(0, p.prefix_end)] if p.prefix_end else []
        busy += [(u.offset, u.offset + u.size) for u in p.units if u.fixed and u.size]
        by_line: dict[int, list[int]] = {}
        for u, parts in assignment.items():
            by_line.setdefault(min(ell for ell, _ in parts), []).append(u)
        targets: dict[int, int] = {}
        for ell in sorted(by_line):
            whole = [u for u in by_line[ell] if len(assignment[u]) == 1]
            split = [u for u in by_line[ell] if len(assignment[u]) > 1]
            whole.sort(key=lambda u: (-p.units[u].align, -p.units[u].size, u))
            for u in whole + split:
                unit = p.units[u]
                at = align_up(ell * line, unit.align)
                if u in split:
                    first_bytes = dict(assignment[u])[ell]
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
