#!/usr/bin/env python3
"""Benchmark the layout optimizer: solver time and optimality gap by record size.

For each record size (default 20, 40, 60, 200, 600 fields), seed and object placement model
(cache-aligned objects, and objects aligned only to the record's alignment), a synthetic
record and profile are generated (see synthetic.py) and `optimize_layout` is run with the
given time limit. Prints one table row per run and writes all figures as JSON when asked
(results and the exact commands used: RESULTS.md):

    .venv/bin/python bench/solver/bench_solver.py --json /tmp/bench_solver.json

This script measures; it does not tune or change the optimizer.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_case, typed  # noqa: E402

from cachefit.layout import optimize_layout  # noqa: E402

HOT = {20: 14, 40: 28, 60: 40, 200: 60, 600: 100}
"""Touched fields per record size (600 fields: like task_struct on a hot path)."""


def run(n: int, seed: int, object_align: int | None, time_limit: float, paths: int
        ) -> dict[str, Any]:
    hot = HOT.get(n, max(2, n // 4))
    record, profile = make_case(n, hot, paths, seed)
    began = time.monotonic()
    result = optimize_layout(record, typed(profile), object_align=object_align,
                             time_limit=time_limit)
    wall = time.monotonic() - began
    return {
        "fields": n, "hot": hot, "seed": seed, "size": record.size,
        "object_align": result.object_align, "starts": result.start_offsets,
        "sequences": len(profile["sequences"]),
        "lines_before": result.lines_before, "lines_after": result.lines_after,
        "lines_lower_bound": result.lines_lower_bound, "gap": result.gap,
        "optimal": result.optimal, "dirty_before": result.dirty_before,
        "dirty_after": result.dirty_after, "size_after": result.size_after,
        "seconds": round(wall, 2), "method": result.method,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60, 200, 600])
    ap.add_argument("--seeds", type=int, default=2, help="seeds per size (default 2)")
    ap.add_argument("--only-seeds", type=int, nargs="+", help="these seeds instead of --seeds")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--paths", type=int, default=6, help="sequences per profile")
    ap.add_argument("--placement", choices=["both", "aligned", "record"], default="both")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args(argv)
    aligns: list[int | None] = {"both": [64, None], "aligned": [64],
                                "record": [None]}[args.placement]
    header = (f"{'fields':>6} {'hot':>4} {'seed':>4} {'obj':>4} {'before':>7} {'after':>7} "
              f"{'bound':>7} {'gap':>6} {'opt':>3} {'dirty':>11} {'size':>9} {'time':>6}  "
              "method")
    print(header)
    print("-" * len(header))
    rows = []
    for n in args.sizes:
        for seed in args.only_seeds or range(args.seeds):
            for align in aligns:
                r = run(n, seed, align, args.time_limit, args.paths)
                rows.append(r)
                print(f"{r['fields']:>6} {r['hot']:>4} {r['seed']:>4} {r['object_align']:>4} "
                      f"{r['lines_before']:>7.3f} {r['lines_after']:>7.3f} "
                      f"{r['lines_lower_bound']:>7.3f} {r['gap']:>6.1%} "
                      f"{'yes' if r['optimal'] else 'no':>3} "
                      f"{r['dirty_before']:>5.2f}>{r['dirty_after']:<5.2f} "
                      f"{r['size']:>4}>{r['size_after']:<4} {r['seconds']:>5.1f}s  {r['method']}",
                      flush=True)
    if args.json:
        args.json.write_text(json.dumps({
            "time_limit": args.time_limit, "paths": args.paths,
            "machine": platform.machine(), "python": platform.python_version(),
            "runs": rows}, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
