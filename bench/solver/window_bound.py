#!/usr/bin/env python3
"""Experiment: a CP-SAT lower bound on the expected lines of objects that may start inside
a cache line (the "window" relaxation). Measured, not used by the optimizer: see RESULTS.md,
"Unaligned objects: the window relaxation", for why.

With object alignment A < line L, granules of g = A bytes and G = L/g start offsets, the
lines a footprint F occupies, summed over the G starts, equal the number of windows of G
consecutive granules that contain a granule F touches (docs/layout.md, "Cost model").
The relaxation assigns the bytes of hot units to granules and counts those windows:

* hot units with the same footprints form one *fluid* class (as the line model's class
  model): its bytes spread over granules at will, at least one byte (or its smallest
  member, when no member can straddle a granule boundary) per granule it uses;
* capacity g bytes per granule; order, alignment padding, contiguity and cold units are
  dropped;
* only the granules holding hot bytes are kept, moved to the front in their order:
  removing a granule with no hot byte shortens every distance between touched granules,
  and the count is G plus the sum of those distances capped at G, so it never grows.

Every C layout therefore maps to an assignment of no greater cost, and the optimum (or
CP-SAT's proven bound on it) is a lower bound on the lines of every layout; so is the sum,
over a partition of the footprints into groups, of each group's bound (`--group`). It
applies only without a fixed area, pinned units or fixed spans in footprints (they cannot
be moved to the front). It gives bounds only: no orders, no targets.

    .venv/bin/python bench/solver/window_bound.py --sizes 20 40 60 --seeds 3 --group 0
    .venv/bin/python bench/solver/window_bound.py --check 40   # bound <= proven optimum
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ortools.sat.python import cp_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_solver import HOT  # noqa: E402
from synthetic import make_case, typed  # noqa: E402

from cachefit.layout import optimize_layout  # noqa: E402
from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.line_cost import simple_bound  # noqa: E402
from cachefit.layout.problem import LayoutProblem, WeightedFootprint, build_problem  # noqa: E402


@dataclass(frozen=True)
class WindowBound:
    """The relaxation's lines bound (weighted, summed over starts) and how it ended."""

    bound: int
    value: int | None
    status: str
    seconds: float
    det_used: float


class WindowModel:
    def __init__(self, problem: LayoutProblem, fps: Sequence[WeightedFootprint]) -> None:
        p = problem
        self.p = p
        g = min(p.object_align, p.line)
        classes: dict[tuple[int, ...], list[int]] = {}
        for u in sorted({u for fp in fps for u in fp.units}):
            if p.units[u].size:
                sig = tuple(i for i, fp in enumerate(fps) if u in fp.units)
                classes.setdefault(sig, []).append(u)
        n = min(sum(_span(p, u, g) for ms in classes.values() for u in ms),
                -(-p.size_limit // g) + 1)
        big_g = p.line // g
        self.m = cp_model.CpModel()
        m = self.m
        items = list(classes.items())
        x: dict[tuple[int, int], cp_model.IntVar] = {}
        b: dict[tuple[int, int], cp_model.IntVar] = {}
        for c, (_sig, members) in enumerate(items):
            size = sum(p.units[u].size for u in members)
            kmax = sum(_span(p, u, g) for u in members)
            fluid_min = min(1 if _span(p, u, g) > 1 else p.units[u].size for u in members)
            for k in range(n):
                x[c, k] = m.new_bool_var(f"x{c}_{k}")
                b[c, k] = m.new_int_var(0, min(g, size), f"b{c}_{k}")
                m.add(b[c, k] >= fluid_min * x[c, k])
                m.add(b[c, k] <= min(g, size) * x[c, k])
            m.add(sum(b[c, k] for k in range(n)) == size)
            m.add(sum(x[c, k] for k in range(n)) <= kmax)
        for k in range(n):
            m.add(sum(b[c, k] for c in range(len(items))) <= g)
        used = []
        for k in range(n):
            uv = m.new_bool_var(f"used{k}")
            m.add_max_equality(uv, [x[c, k] for c in range(len(items))])
            used.append(uv)
        for k in range(n - 1):
            m.add(used[k] >= used[k + 1])
        terms = []
        for fi, fp in enumerate(fps):
            members = [c for c, (sig, _m) in enumerate(items) if fi in sig]
            if not members:
                continue
            y = []
            for k in range(n):
                yv = m.new_bool_var(f"y{fi}_{k}")
                m.add_max_equality(yv, [x[c, k] for c in members])
                y.append(yv)
            occ = []
            for j in range(-(big_g - 1), n):
                ov = m.new_bool_var(f"o{fi}_{j}")
                for k in range(max(0, j), min(n, j + big_g)):
                    m.add_implication(y[k], ov)
                occ.append(ov)
            # m distinct touched granules need at least G - 1 + m windows.
            m.add(sum(occ) >= big_g - 1 + sum(y))
            terms.append(fp.weight * sum(occ))
        m.minimize(sum(terms))

    def solve(self, det: float, seconds: float) -> WindowBound:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        solver.parameters.max_deterministic_time = max(det, 0.01)
        solver.parameters.max_time_in_seconds = max(seconds, 0.05)
        began = time.monotonic()
        status = solver.solve(self.m)
        name = solver.status_name(status)
        value = int(round(solver.objective_value)) if status in (
            cp_model.OPTIMAL, cp_model.FEASIBLE) else None
        bound = int(-(-solver.best_objective_bound // 1)) if status != cp_model.INFEASIBLE \
            else 0
        if status == cp_model.OPTIMAL and value is not None:
            bound = value
        return WindowBound(bound, value, name, time.monotonic() - began,
                           solver.deterministic_time)


def _span(p: LayoutProblem, u: int, g: int) -> int:
    """Granules unit `u` may touch (one more when it may straddle a granule boundary)."""
    unit = p.units[u]
    k = -(-unit.size // g)
    return k + 1 if unit.size > unit.align else k


def applies(problem: LayoutProblem) -> bool:
    """Whether the window model is a valid bound for `problem` (see the module doc)."""
    p = problem
    return len(p.starts) > 1 and not p.prefix_end and \
        not any(fp.fixed for fp in p.lines_fp) and not any(u.fixed for u in p.units)


def groups_of(fps: Sequence[WeightedFootprint], size: int) -> list[list[WeightedFootprint]]:
    """Footprints in groups of `size` (0: one group): heaviest first, then the one sharing
    the most weighted units with the group."""
    rest = sorted(fps, key=lambda f: (-f.weight, f.units))
    if size <= 0:
        return [rest]
    out = []
    while rest:
        group = [rest.pop(0)]
        while len(group) < size and rest:
            have = {u for f in group for u in f.units}
            best = max(rest, key=lambda f: len(have & set(f.units)) * f.weight)
            rest.remove(best)
            group.append(best)
        out.append(group)
    return out


def grouped_bound(problem: LayoutProblem, group: int, det: float
                  ) -> tuple[int, list[str], float]:
    """Sum of the groups' bounds, their CP-SAT statuses, seconds."""
    began = time.monotonic()
    total, statuses = 0, []
    for fps in groups_of(problem.lines_fp, group):
        r = WindowModel(problem, fps).solve(det, 60.0)
        total += r.bound
        statuses.append(r.status)
    return total, statuses, time.monotonic() - began


def _problem(record: Any, profile: dict[str, Any]) -> LayoutProblem:
    return build_problem(record, typed(profile), cache_line=64, object_align=None,
                         relax_align=False, constraints=LayoutConstraints(),
                         allow_growth=False, merge=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--group", type=int, default=0,
                    help="footprints per group (0: all in one model)")
    ap.add_argument("--det", type=float, default=2.0,
                    help="CP-SAT deterministic time per model")
    ap.add_argument("--check", type=int, default=0,
                    help="instead: this many random records of <= 8 fields, bound <= optimum")
    args = ap.parse_args(argv)
    if args.check:
        sys.path.insert(0, str(ROOT / "tests" / "layout"))
        from layout_synth import random_case  # noqa: PLC0415
        rng = random.Random(7)
        checked = stronger = 0
        for _ in range(args.check):
            record, entry = random_case(rng)
            p = _problem(record, entry)
            if not applies(p) or not p.hot:
                continue
            bound, statuses, _ = grouped_bound(p, args.group, args.det)
            res = optimize_layout(record, typed(entry), object_align=None, time_limit=5.0)
            if not res.optimal:
                continue
            best = round(res.lines_after * p.total_count * len(p.starts))
            assert bound <= best, (bound, best, statuses)
            checked += 1
            stronger += bound > simple_bound(p, p.lines_fp)
        print(f"{checked} records with a proven optimum: window bound <= optimum in every "
              f"one, above the per-footprint bound in {stronger}")
        return 0
    print("fields seed  simple  window statuses  seconds")
    for n in args.sizes:
        for seed in range(args.seeds):
            record, profile = make_case(n, HOT.get(n, max(2, n // 4)), 6, seed)
            p = _problem(record, profile)
            per = p.total_count * len(p.starts)
            bound, statuses, secs = grouped_bound(p, args.group, args.det)
            print(f"{n:>6} {seed:>4} {simple_bound(p, p.lines_fp) / per:>7.3f} "
                  f"{bound / per:>7.3f} {','.join(s[:3] for s in statuses)} "
                  f"{secs:>6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
