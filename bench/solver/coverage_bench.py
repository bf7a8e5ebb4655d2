#!/usr/bin/env python3
"""Does the granule coverage model prove unaligned records the current optimizer does not?

For each size and seed (synthetic.py records, objects aligned to the record's alignment), run
`optimize_layout` (10 s limit) for its best layout and bound, then the exact CP-SAT models
hinted with that layout, one worker, a deterministic budget: `cpsat_model.LayoutModel`
(one line variable per unit, start and line) and `coverage_model.CoverageModel` (granule
shadows, covered positions). Prints, per invocation, the optimizer's lines and bound and
each model's lines, bound and status after its "lines" stage:

    nice .venv/bin/python bench/solver/coverage_bench.py --sizes 20 40 60 --seeds 3 --det 3

This script measures; it does not change the optimizer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_solver import HOT  # noqa: E402
from coverage_model import (  # noqa: E402
    CoverageModel,
    HotCoverageRelaxation,
    OneHotCoverageRelaxation,
)
from synthetic import make_case, typed  # noqa: E402

from cachefit.layout import optimize_layout  # noqa: E402
from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.cpsat_model import LayoutModel  # noqa: E402
from cachefit.layout.line_cost import per_invocation, weighted_totals  # noqa: E402
from cachefit.layout.placement import place_order  # noqa: E402
from cachefit.layout.problem import build_problem  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--det", type=float, default=3.0,
                    help="CP-SAT deterministic time per model (3 = the optimizer's 10 s)")
    ap.add_argument("--models", nargs="+", default=["circuit", "coverage"],
                    choices=["circuit", "coverage", "relax", "onehot"])
    ap.add_argument("--no-hint", action="store_true",
                    help="solve without the optimizer's layout as a hint")
    args = ap.parse_args(argv)
    print(f"{'fields':>6} {'hot':>4} {'seed':>4} {'units':>5} {'best':>7} {'bound':>7}  "
          "model: lines bound status det-time wall")
    for n in args.sizes:
        for seed in range(args.seeds):
            record, profile = make_case(n, HOT.get(n, n // 4), 6, seed)
            res = optimize_layout(record, typed(profile), time_limit=10.0)
            problem = build_problem(record, typed(profile), cache_line=64, object_align=None,
                                    relax_align=False, constraints=LayoutConstraints(),
                                    allow_growth=False, merge=False)
            order: list[int] = []
            for name in res.order:
                u = problem.field_unit.get(name)
                if u is not None and u not in order:
                    order.append(u)
            placement = place_order(problem, order)
            lines, _ = weighted_totals(problem, placement.offsets)
            print(f"{n:>6} {HOT.get(n, n // 4):>4} {seed:>4} {len(problem.units):>5} "
                  f"{per_invocation(problem, lines):>7.3f} {res.lines_lower_bound:>7.3f}",
                  flush=True)
            for name in args.models:
                cls = {"coverage": CoverageModel, "relax": HotCoverageRelaxation,
                       "onehot": OneHotCoverageRelaxation, "circuit": LayoutModel}[name]
                began = time.monotonic()
                model = cls(problem)
                if not args.no_hint:
                    model.hint(placement.order, placement.offsets)
                built = time.monotonic() - began
                model.m.minimize(model.lines_expr)
                out, used = model._stage("lines", model.lines_expr, args.det)
                wall = time.monotonic() - began
                val = "-" if out.value is None else f"{per_invocation(problem, out.value):.3f}"
                bnd = "-" if out.bound is None else f"{per_invocation(problem, out.bound):.3f}"
                print(f"{'':>40}{name:>9}: {val:>7} {bnd:>7} {out.status:<8} "
                      f"{used:5.2f} {wall:5.1f}s (build {built:.1f}s, "
                      f"{len(model.m.proto.variables)} vars)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
