#!/usr/bin/env python3
"""block_search best-first against depth-first at equal node budgets (H1, measurement).

For each bench record (synthetic.py, objects aligned to the record's alignment, 8 start
offsets) block_search runs from the recorded upper bound of group_bound.py (`UPPERS`: the
optimizer's layout without block_search at 10 s, fixed so runs compare and do not depend
on the clock) with each method and node budget, without a wall-clock backstop, so the
figures depend only on the node counts. Relaxed layouts are realised by cold fill as the
optimizer does (block_bench.run). Prints, per run: the proven lines bound, the best
realised layout, whether the lines and the dirty lines are proven, the dirty bound, nodes
used and CPU seconds. Results: RESULTS.md ("best-first").

    .venv/bin/python bench/solver/best_first_bench.py --records 40/0 40/1 40/2 \\
        --nodes 35000 --methods dfs best_first

This script only measures; it changes nothing in the optimizer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_bench import run  # noqa: E402
from group_bound import UPPERS  # noqa: E402
from synthetic import make_case, typed  # noqa: E402

from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.problem import build_problem  # noqa: E402

HOT = {20: 14, 40: 28, 60: 40}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", nargs="+", default=[f"{n}/{s}" for n, s in sorted(UPPERS)])
    ap.add_argument("--nodes", type=int, nargs="+", default=[35_000])
    ap.add_argument("--methods", nargs="+", default=["dfs", "best_first"],
                    choices=["dfs", "best_first"])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = []
    print(f"{'record':>6} {'method':>10} {'nodes':>7} {'upper':>7} {'bound':>7} {'best':>7} "
          f"{'gap':>6} {'lines':>5} {'opt':>3} {'dirty b':>7} {'used':>7} {'cpu':>6}")
    for name in args.records:
        n, seed = (int(x) for x in name.split("/"))
        record, profile = make_case(n, HOT[n], 6, seed)
        problem = build_problem(record, typed(profile), cache_line=64, object_align=None,
                                relax_align=False, constraints=LayoutConstraints(),
                                allow_growth=False, merge=False)
        for method in args.methods:
            for nodes in args.nodes:
                r = run(problem, UPPERS[(n, seed)], nodes, method) | {
                    "record": name, "method": method, "budget": nodes}
                rows.append(r)
                dirty = "-" if r["dirty_bound"] is None else f"{r['dirty_bound']:.3f}"
                print(f"{name:>6} {method:>10} {nodes:>7} {r['upper']:>7.3f} "
                      f"{r['bound']:>7.3f} {r['best']:>7.3f} {r['gap']:>6.1%} "
                      f"{'yes' if r['lines_proven'] else 'no':>5} "
                      f"{'yes' if r['optimal'] else 'no':>3} {dirty:>7} {r['nodes']:>7} "
                      f"{r['cpu_seconds']:>5.1f}s", flush=True)
    if args.json:
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps({"runs": rows}, indent=2) + "\n")
        tmp.replace(args.json)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
