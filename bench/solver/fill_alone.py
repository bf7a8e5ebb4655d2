#!/usr/bin/env python3
"""Run the line-filling model alone on one synthetic record, without the optimizer's budget.

For a bench/solver record (cache-aligned objects): the class model's lines bound, then the
line-filling model hinted with the line-clustering layout and told that bound, with a
given deterministic budget for its lines stage; then up to `--retries` further solutions
of a proven value until one is realised as a C order, whose cost the independent oracle
(tests/layout/layout_synth.py) measures. Answers "is the bound reachable at all, and with
how much budget" (bench/solver/RESULTS.md, seed 5):

    .venv/bin/python bench/solver/fill_alone.py --fields 60 --seed 5 --det 14

This script only measures; it does not change the optimizer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "solver"))
sys.path.insert(0, str(ROOT / "tests" / "layout"))

from bench_solver import HOT  # noqa: E402
from layout_synth import Oracle  # noqa: E402
from synthetic import make_case, typed  # noqa: E402

from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.line_clustering import cluster_targets  # noqa: E402
from cachefit.layout.line_fill_model import LineFillModel  # noqa: E402
from cachefit.layout.line_model import LineModel  # noqa: E402
from cachefit.layout.placement import place_order  # noqa: E402
from cachefit.layout.problem import build_problem  # noqa: E402
from cachefit.layout.realize import compact_tail, realize  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fields", type=int, default=60)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--paths", type=int, default=6)
    ap.add_argument("--det", type=float, default=14.0,
                    help="deterministic seconds for the lines stage")
    ap.add_argument("--retries", type=int, default=4)
    args = ap.parse_args(argv)
    record, entry = make_case(args.fields, HOT.get(args.fields, args.fields // 4), args.paths,
                              args.seed)
    problem = build_problem(record, typed(entry), cache_line=64, object_align=64, relax_align=False,
                            constraints=LayoutConstraints(), allow_growth=False, merge=False)
    classes = LineModel(problem, classes=True).solve(2.0)
    stage = classes.stage("lines") if classes is not None else None
    known = stage.bound if stage is not None else None
    print(f"class model lines bound: {known}")
    targets = cluster_targets(problem, max_evals=40_000)
    start = place_order(problem, compact_tail(problem, realize(problem, targets)))
    oracle = Oracle(record, entry, cache_line=64, object_align=64)
    names = [n for u in start.order for n in problem.units[u].fields]
    print(f"line-clustering layout: {oracle.cost(names)} (lines, dirty), weighted")
    model = LineFillModel(problem)
    if known is not None:
        model.at_least(known)
    model.hint(start.offsets)
    began = time.process_time()
    out, used = model._stage("lines", model.lines_expr, args.det, 3600.0)
    print(f"lines stage: {out.status} value {out.value} bound {out.bound}, "
          f"{used:.2f} deterministic s, {time.process_time() - began:.1f} CPU s")
    values = model._values
    for attempt in range(args.retries + 1):
        if values is None:
            break
        order = model.realize(values)
        if order is not None:
            names = [n for u in order for n in problem.units[u].fields]
            print(f"realised (attempt {attempt}): oracle {oracle.cost(names)}, size "
                  f"{place_order(problem, order).size} of {problem.size_limit}, "
                  f"{problem.total_count} invocations")
            return 0
        if out.value != out.bound or attempt == args.retries:
            break
        values = model.another(values, args.det / 2)
        print(f"no C order; another solution: {model.last_det or 0.0:.2f} deterministic s")
    print("not realised")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
