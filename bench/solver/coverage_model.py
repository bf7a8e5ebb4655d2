"""Exact CP-SAT model for objects that may start inside a line: a granule coverage cost.

Same C-layout model as `cpsat_model.LayoutModel` (offsets, circuit, rules, symmetry,
order changes); only the line objectives differ. With granules of g = min(object_align,
line) bytes and K = line / g starts, a footprint's lines summed over all starts equal the
number of positions p covered by some touched granule's shadow [q, q + K - 1]
(`line_cost.footprint_lines_total`). So per unit: start and end granule as integers and
order-encoded booleans "start <= p" and "end + K - 1 >= p"; per footprint and position a
boolean "covered", implied by each of its units. Fixed spans and pinned units cover
constant positions. `HotCoverageRelaxation` drops the cold units and the circuit (a lower
bound); `OneHotCoverageRelaxation` is that with one-hot start granules.

Experimental, so it lives here and not in the package: used by coverage_bench.py to compare
with the per-start line model; the optimizer does not call it (see RESULTS.md for why).
It does not decide when to be used and does not search.
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from cachefit.layout.cpsat_model import LayoutModel
from cachefit.layout.line_cost import footprint_bound_total
from cachefit.layout.problem import LayoutProblem, WeightedFootprint


@dataclass
class _Shadow:
    """Order encoding of one unit's granule shadow [start, end + K - 1]."""

    lo: int                                   # smallest position it can cover
    hi: int                                   # largest position it can cover
    start: cp_model.IntVar
    end: cp_model.IntVar
    starts_by: dict[int, cp_model.IntVar]     # p -> (start <= p)
    reaches: dict[int, cp_model.IntVar]       # p -> (end + K - 1 >= p)


class CoverageModel(LayoutModel):
    """`LayoutModel` with the granule coverage objective (exact for every start set)."""

    def __init__(self, problem: LayoutProblem) -> None:
        self.gran = min(problem.object_align, problem.line)
        self.big_k = problem.line // self.gran
        self._shadows: dict[int, _Shadow] = {}
        self._covs: list[tuple[cp_model.IntVar, WeightedFootprint, int]] = []
        super().__init__(problem)

    def _fixed_granules(self, fp: WeightedFootprint) -> set[int]:
        g = self.gran
        out: set[int] = set()
        spans = list(fp.fixed)
        for u in fp.units:
            unit = self.p.units[u]
            if unit.fixed and unit.size:
                spans.append((unit.offset, unit.offset + unit.size))
        for b, e in spans:
            out.update(range(b // g, (e - 1) // g + 1))
        return out

    def _shadow(self, u: int) -> _Shadow:
        if u in self._shadows:
            return self._shadows[u]
        unit = self.p.units[u]
        g, k = self.gran, self.big_k
        lo_b, hi_b = self._bounds(u)
        s_lo, s_hi = lo_b // g, hi_b // g
        e_lo, e_hi = (lo_b + unit.size - 1) // g, (hi_b + unit.size - 1) // g
        start = self._new_int(s_lo, s_hi, f"gs{u}")
        end = self._new_int(e_lo, e_hi, f"ge{u}")
        o = self.o[u]
        self.m.add(o >= g * start)
        self.m.add(o <= g * start + g - 1)
        self.m.add(o + unit.size - 1 >= g * end)
        self.m.add(o + unit.size - 1 <= g * end + g - 1)
        starts_by: dict[int, cp_model.IntVar] = {}
        prev = None
        for p in range(s_lo, s_hi):
            a = self._new_bool(f"sb{u}_{p}")
            self.m.add(start <= p).only_enforce_if(a)
            self.m.add(start >= p + 1).only_enforce_if(a.Not())
            if prev is not None:
                self.m.add_implication(prev, a)
            starts_by[p] = a
            prev = a
        reaches: dict[int, cp_model.IntVar] = {}
        prev = None
        for p in range(e_hi + k - 1, e_lo + k - 1, -1):
            b = self._new_bool(f"re{u}_{p}")
            self.m.add(end + k - 1 >= p).only_enforce_if(b)
            self.m.add(end + k - 1 <= p - 1).only_enforce_if(b.Not())
            if prev is not None:
                self.m.add_implication(prev, b)
            reaches[p] = b
            prev = b
        sh = _Shadow(s_lo, e_hi + k - 1, start, end, starts_by, reaches)
        self._shadows[u] = sh
        return sh

    @staticmethod
    def _lits(sh: _Shadow, p: int) -> list[cp_model.IntVar] | None:
        """Literals whose conjunction means "p is in the shadow"; None if it never is."""
        if p < sh.lo or p > sh.hi:
            return None
        out = []
        if p in sh.starts_by:  # else start <= p holds for every offset
            out.append(sh.starts_by[p])
        if p in sh.reaches:  # else end + K - 1 >= p holds for every offset
            out.append(sh.reaches[p])
        return out

    def _objective(self, fps: tuple[WeightedFootprint, ...]) -> cp_model.LinearExprT:
        terms: list[cp_model.LinearExprT] = []
        constant = 0
        for fp in fps:
            fixed = self._fixed_granules(fp)
            consts: set[int] = set()
            for q in fixed:
                consts.update(range(q, q + self.big_k))
            movers = [u for u in fp.units
                      if self.p.units[u].size and not self.p.units[u].fixed]
            shadows = [self._shadow(u) for u in movers]
            by_pos: dict[int, list[list[cp_model.IntVar]]] = {}
            for sh in shadows:
                for p in range(sh.lo, sh.hi + 1):
                    if p in consts:
                        continue
                    lits = self._lits(sh, p)
                    if lits is not None:
                        by_pos.setdefault(p, []).append(lits)
            covs = []
            for p in sorted(by_pos):
                conj = by_pos[p]
                if any(not lits for lits in conj):
                    consts.add(p)  # some unit covers p whatever its offset
                    continue
                c = self._new_bool(f"cov_{p}")
                self._covs.append((c, fp, p))
                for lits in conj:
                    self.m.add_bool_or([*(lit.Not() for lit in lits), c])
                covs.append(c)
            constant += fp.weight * len(consts)
            need = footprint_bound_total(self.p, fp) - len(consts)
            if covs:
                if need > 0:
                    self.m.add(sum(covs) >= need)
                terms.append(fp.weight * sum(covs))
        return sum(terms) + constant if terms else constant

    def _apply_hint(self, values: dict[int, int]) -> None:
        missing = [sh for sh in self._shadows.values() if sh.start.index not in values]
        if missing or any(c.index not in values for c, _, _ in self._covs):
            self._complete(values)
        super()._apply_hint(values)

    def _complete(self, values: dict[int, int]) -> None:
        """Fill the coverage variables from the unit offsets in `values`."""
        g, k = self.gran, self.big_k
        offs = {u: values[self.k[u].index] * self.p.units[u].align for u in self.k}
        for u, sh in self._shadows.items():
            size = self.p.units[u].size
            s, e = offs[u] // g, (offs[u] + size - 1) // g
            values[sh.start.index] = s
            values[sh.end.index] = e
            for p, a in sh.starts_by.items():
                values[a.index] = int(s <= p)
            for p, b in sh.reaches.items():
                values[b.index] = int(e + k - 1 >= p)
        for c, fp, p in self._covs:
            hit = False
            for u in fp.units:
                unit = self.p.units[u]
                if unit.size and not unit.fixed:
                    s, e = offs[u] // g, (offs[u] + unit.size - 1) // g
                    hit = hit or s <= p <= e + k - 1
            values[c.index] = int(hit)


class HotCoverageRelaxation(CoverageModel):
    """The coverage objective over touched (and fixed) units only, cold units dropped.

    No circuit: touched units only keep their alignment, no overlap, the fixed area, the
    size limit, `first` and the side rules. Every C layout gives such offsets with the same
    line cost (cold units cost nothing), so the optimum is a lower bound; its offsets are
    not always a C layout (cold units need not fit the gaps).
    """

    def _build_offsets(self) -> None:
        keep = self.p.hot | {u.index for u in self.p.units if u.fixed}
        self.members = [u for u in self.p.movable if u in keep]
        self.member_set = set(self.members)
        super()._build_offsets()

    def _build_circuit(self) -> None:
        p = self.p
        self.end = self._new_int(p.prefix_end, p.size_limit, "end")
        self.size = self._new_int(0, p.size_limit // p.record_align, "q")
        for u in self.members:
            self.m.add(self.end >= self.o[u] + p.units[u].size)
        if p.first is not None and p.first in self.member_set:
            at = -(-p.prefix_end // p.units[p.first].align) * p.units[p.first].align
            self.m.add(self.o[p.first] == at)

    def _interchangeable_pairs(self) -> list[tuple[int, int]]:
        # valid here too: swapping two such units changes no cost and breaks no rule
        return [(i, j) for i, j in super()._interchangeable_pairs()
                if i in self.member_set and j in self.member_set]

    def _inversions(self) -> cp_model.LinearExprT | None:
        return None

    def hint(self, order: list[int] | tuple[int, ...], offsets: list[int] | tuple[int, ...]
             ) -> None:
        values = {k.index: offsets[u] // self.p.units[u].align for u, k in self.k.items()}
        assert self.end is not None and self.size is not None
        end = max((offsets[u] + self.p.units[u].size for u in self.members),
                  default=self.p.prefix_end)
        values[self.end.index] = max(end, self.p.prefix_end)
        values[self.size.index] = 0
        self._apply_hint(values)


class OneHotCoverageRelaxation(HotCoverageRelaxation):
    """`HotCoverageRelaxation` with one-hot start granules (a time-indexed formulation).

    Per touched unit: booleans x[q] "starts in granule q" (exactly one) and t "its last byte
    spills into one more granule"; covered positions get the linear cut
    cov[p] >= sum of x[q] over the starts q whose shadow holds p, a stronger LP than the
    order encoding's clauses.
    """

    def __init__(self, problem: LayoutProblem) -> None:
        self._oh: dict[int, tuple[dict[int, cp_model.IntVar], cp_model.IntVar | None, int]]
        self._oh = {}
        super().__init__(problem)

    def _onehot(self, u: int) -> tuple[dict[int, cp_model.IntVar], cp_model.IntVar | None, int]:
        cache = self._oh
        if u in cache:
            return cache[u]
        unit = self.p.units[u]
        g = self.gran
        lo_b, hi_b = self._bounds(u)
        xs: dict[int, cp_model.IntVar] = {}
        for q in range(lo_b // g, hi_b // g + 1):
            if -(-q * g // unit.align) * unit.align > min(hi_b, q * g + g - 1):
                continue  # no aligned offset inside granule q
            x = self._new_bool(f"x{u}_{q}")
            xs[q] = x
            self.m.add(self.o[u] >= q * g).only_enforce_if(x)
            self.m.add(self.o[u] <= q * g + g - 1).only_enforce_if(x)
        self.m.add_exactly_one(xs.values())
        m0 = (unit.size - 1) // g
        t = None
        if unit.align < g and (g - unit.align) % g + unit.size - 1 >= (m0 + 1) * g:
            t = self._new_bool(f"sp{u}")
            # t false: the last byte stays in granule start + m0
            for q, x in xs.items():
                self.m.add(self.o[u] + unit.size - 1 <= q * g + (m0 + 1) * g - 1
                           ).only_enforce_if([x, t.Not()])
        cache[u] = (xs, t, m0)
        return cache[u]

    def _objective(self, fps: tuple[WeightedFootprint, ...]) -> cp_model.LinearExprT:
        terms: list[cp_model.LinearExprT] = []
        constant = 0
        k = self.big_k
        for fp in fps:
            consts: set[int] = set()
            for q in self._fixed_granules(fp):
                consts.update(range(q, q + k))
            movers = [u for u in fp.units
                      if self.p.units[u].size and not self.p.units[u].fixed]
            sums: dict[int, list[list[cp_model.IntVar]]] = {}
            spills: dict[int, list[tuple[cp_model.IntVar, cp_model.IntVar]]] = {}
            for u in movers:
                xs, t, m0 = self._onehot(u)
                per_p: dict[int, list[cp_model.IntVar]] = {}
                for q, x in xs.items():
                    for p in range(q, q + m0 + k):
                        per_p.setdefault(p, []).append(x)
                    if t is not None:
                        spills.setdefault(q + m0 + k, []).append((x, t))
                for p, lst in per_p.items():
                    sums.setdefault(p, []).append(lst)
            covs = []
            for p in sorted(set(sums) | set(spills)):
                if p in consts:
                    continue
                c = self._new_bool(f"cov_{p}")
                self._covs.append((c, fp, p))
                for lst in sums.get(p, []):
                    self.m.add(c >= sum(lst))
                for x, t in spills.get(p, []):
                    self.m.add_bool_or([x.Not(), t.Not(), c])
                covs.append(c)
            constant += fp.weight * len(consts)
            need = footprint_bound_total(self.p, fp) - len(consts)
            if covs:
                if need > 0:
                    self.m.add(sum(covs) >= need)
                terms.append(fp.weight * sum(covs))
        return sum(terms) + constant if terms else constant

    def _complete(self, values: dict[int, int]) -> None:
        g, k = self.gran, self.big_k
        offs = {u: values[self.k[u].index] * self.p.units[u].align for u in self.k}
        for u, (xs, t, _m0) in self._oh.items():
            size = self.p.units[u].size
            for q, x in xs.items():
                values[x.index] = int(offs[u] // g == q)
            if t is not None:
                values[t.index] = int((offs[u] + size - 1) // g > offs[u] // g + (size - 1) // g)
        for c, fp, p in self._covs:
            hit = False
            for u in fp.units:
                unit = self.p.units[u]
                if unit.size and not unit.fixed:
                    s, e = offs[u] // g, (offs[u] + unit.size - 1) // g
                    hit = hit or s <= p <= e + k - 1
            values[c.index] = int(hit)

    def _apply_hint(self, values: dict[int, int]) -> None:
        if any(c.index not in values for c, _, _ in self._covs):
            self._complete(values)
        LayoutModel._apply_hint(self, values)
