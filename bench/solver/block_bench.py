#!/usr/bin/env python3
"""Measure block_search (exact search of the granule relaxation) on the bench records.

For each record size and seed (synthetic.py, objects aligned to the record's alignment,
8 start offsets) the optimizer is run *without* block_search to get its best layout (the
upper bound), then `block_search` is run from that layout with each node budget given,
so the figures depend only on the node counts (deterministic, as the upper bound is).
Prints, per run: the per-footprint bound, the
upper bound, the proven lines bound and whether it is the relaxation's optimum, the dirty
bound, the best realised layout, nodes and CPU seconds. Results: RESULTS.md.

    .venv/bin/python bench/solver/block_bench.py --sizes 40 60 --seeds 3 --nodes 60000

This script measures; it does not change the optimizer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_case, typed  # noqa: E402

from cachefit.layout import block_search as bs  # noqa: E402
from cachefit.layout import optimizer  # noqa: E402
from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.line_cost import cost_totals, per_invocation, simple_bound  # noqa: E402
from cachefit.layout.placement import place_order, violations  # noqa: E402
from cachefit.layout.problem import build_problem  # noqa: E402
from cachefit.layout.realize import compact_tail, realize  # noqa: E402

HOT = {20: 14, 40: 28, 60: 40, 200: 60, 600: 100}


def upper_bound(n: int, seed: int, time_limit: float) -> tuple[Any, Any, tuple[int, int]]:
    record, profile = make_case(n, HOT.get(n, max(2, n // 4)), 6, seed)
    problem = build_problem(record, typed(profile), cache_line=64, object_align=None,
                            relax_align=False, constraints=LayoutConstraints(),
                            allow_growth=False, merge=False)
    saved = optimizer.applicable
    optimizer.applicable = lambda _p: False  # type: ignore[assignment]
    try:
        result = optimizer.optimize_layout(record, typed(profile), time_limit=time_limit)
    finally:
        optimizer.applicable = saved  # type: ignore[assignment]
    units: list[int] = []
    for name in result.order:
        u = problem.field_unit.get(name)
        if u is not None and u not in units:
            units.append(u)
    cost = cost_totals(problem, place_order(problem, units).offsets, problem.lines_fp,
                       problem.dirty_fp)
    return record, problem, (cost.lines, cost.dirty)


def run(problem: Any, upper: tuple[int, int], nodes: int) -> dict[str, Any]:
    best = [upper]

    def judge(targets: dict[int, int]) -> tuple[int, int] | None:
        order = compact_tail(problem, realize(problem, targets))
        placement = place_order(problem, order)
        if violations(problem, placement):
            return None
        c = cost_totals(problem, placement.offsets, problem.lines_fp, problem.dirty_fp)
        best[0] = min(best[0], (c.lines, c.dirty))
        return c.lines, c.dirty

    cpu = time.process_time()
    result = bs.block_search(problem, upper=upper, max_nodes=nodes, judge=judge)
    cpu = time.process_time() - cpu

    def pi(total: int | None) -> float | None:
        return None if total is None else round(per_invocation(problem, total), 4)

    proven_lines = result.lines_bound >= best[0][0]
    return {
        "simple": pi(simple_bound(problem, problem.lines_fp)), "upper": pi(upper[0]),
        "upper_dirty": pi(upper[1]), "bound": pi(result.lines_bound),
        "relaxed_optimum": result.lines_exact, "dirty_bound": pi(result.dirty_bound),
        "best": pi(best[0][0]), "best_dirty": pi(best[0][1]),
        "lines_proven": proven_lines,
        "optimal": proven_lines and result.dirty_bound is not None
        and best[0][1] <= result.dirty_bound,
        "gap": round((best[0][0] - result.lines_bound) / best[0][0], 4),
        "nodes": result.nodes, "lines_nodes": result.lines_nodes,
        "pieces": result.pieces, "item_types": result.item_types,
        "cpu_seconds": round(cpu, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[40, 60])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--nodes", type=int, nargs="+", default=[60_000])
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="the optimizer's limit for the upper bound (default 30)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = []
    print(f"{'fields':>6} {'seed':>4} {'nodes':>8} {'simple':>7} {'upper':>7} {'bound':>7} "
          f"{'best':>7} {'gap':>6} {'lines':>5} {'opt':>3} {'used':>8} {'cpu':>6}")
    for n in args.sizes:
        for seed in range(args.seeds):
            _record, problem, upper = upper_bound(n, seed, args.time_limit)
            for nodes in args.nodes:
                r = run(problem, upper, nodes) | {"fields": n, "seed": seed, "budget": nodes}
                rows.append(r)
                print(f"{n:>6} {seed:>4} {nodes:>8} {r['simple']:>7.3f} {r['upper']:>7.3f} "
                      f"{r['bound']:>7.3f} {r['best']:>7.3f} {r['gap']:>6.1%} "
                      f"{'yes' if r['lines_proven'] else 'no':>5} "
                      f"{'yes' if r['optimal'] else 'no':>3} {r['nodes']:>8} "
                      f"{r['cpu_seconds']:>5.1f}s", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"runs": rows}, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
