#!/usr/bin/env python3
"""Run bench_solver.py with the optimizer's clock replaced by this process's CPU clock.

On a machine shared with many jobs the optimizer's wall-clock backstop (`time_limit`)
fires before its deterministic budgets end, so bench_solver.py measures the load, not the
solver. This wrapper makes `time.monotonic` return the process's CPU time, i.e. it
measures what the optimizer does when it has a core of its own for `time_limit` seconds
(CP-SAT still stops on its own wall-clock limit, which its deterministic limit precedes;
the native block search's wall-clock backstop is moved out of reach, its node budget ends
it).
Same arguments as bench_solver.py, plus `--no-block-search` (the optimizer without
block_search), `--block-dfs` (block_search's depth-first threshold passes instead of the
best-first search), `--block-share X` (block_search's share of `time_limit`) and
`--no-fill` (without the line-filling model), for comparisons:

    .venv/bin/python bench/solver/cpu_clock.py --sizes 20 40 60 --seeds 3 --placement record

This script only measures.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
time.monotonic = time.process_time  # the optimizer's deadlines in CPU seconds

from bench_solver import main  # noqa: E402

from cachefit.layout import block_native, optimizer  # noqa: E402

# the C search's deadline is CLOCK_MONOTONIC + the CPU seconds left: put it out of reach
block_native._c_monotonic = lambda: 1e12  # type: ignore[assignment]

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
        optimizer.NATIVE_NODES_PER_SECOND = int(args[at + 1])
        del args[at:at + 2]
    if "--python-block-search" in args:
        args.remove("--python-block-search")
        block_native.available = lambda: False  # type: ignore[assignment]
    if "--block-dfs" in args:
        args.remove("--block-dfs")
        optimizer.BLOCK_METHOD = "dfs"
    if "--no-fill" in args:
        args.remove("--no-fill")
        optimizer.fill_applicable = lambda problem: False  # type: ignore[assignment]
    raise SystemExit(main(args))
