#!/usr/bin/env python3
"""Run bench_solver.py with switches that change the optimizer, for comparisons.

(The name is historical: this wrapper used to replace the optimizer's clock by the
process's CPU clock, when wall-clock backstops could end its stages on a loaded machine.
Since issue 28 the optimizer reads no clock, so its results are the same either way.)
Same arguments as bench_solver.py, plus `--no-block-search` (the optimizer without
block_search), `--block-share X` (block_search's share of `time_limit`),
`--nodes-per-second N` and `--no-fill` (without the line-filling model), for comparisons:

    .venv/bin/python bench/solver/cpu_clock.py --sizes 20 40 60 --seeds 3 --placement record

This script only measures.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_solver import main  # noqa: E402

from cachefit.layout import optimizer  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--no-block-search" in args:
        args.remove("--no-block-search")
        optimizer.BLOCK_MAX_HOT = -1
    if "--block-share" in args:
        at = args.index("--block-share")
        optimizer.BLOCK_SHARE = float(args[at + 1])
        del args[at:at + 2]
    if "--nodes-per-second" in args:
        at = args.index("--nodes-per-second")
        optimizer.NODES_PER_SECOND = int(args[at + 1])
        del args[at:at + 2]
    if "--no-fill" in args:
        args.remove("--no-fill")
        optimizer.fill_applicable = lambda problem: False  # type: ignore[assignment]
    raise SystemExit(main(args))
