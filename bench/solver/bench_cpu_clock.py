#!/usr/bin/env python3
"""Run the solver benchmark's cases with the optimizer's clock replaced by this process's
CPU time, so that a heavily loaded machine (load average ~10 on 2 cores) measures what an
idle core would do: the wall-clock backstops (`time_limit`, the line models' deadline) then
fire after that much CPU time, and the deterministic budgets decide as they are meant to.

    nice .venv/bin/python bench/solver/bench_cpu_clock.py --fields 60 --touched 40 --seeds 16

One line per seed: lines before / after / bound, gap, proven, dirty after / bound, size,
wall and CPU seconds, method. `--no-fill` turns the line-filling model off (for
comparisons). This script measures; it does not change the optimizer.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_case  # noqa: E402

import cachefit.layout as layout_pkg  # noqa: E402
import cachefit.layout.optimizer as optimizer  # noqa: E402
from cachefit.layout import optimize_layout  # noqa: E402


def _cpu_clock() -> None:
    shim = types.SimpleNamespace(monotonic=time.process_time, perf_counter=time.process_time,
                                 time=time.time, process_time=time.process_time)
    for info in pkgutil.iter_modules(layout_pkg.__path__):
        module = importlib.import_module(f"cachefit.layout.{info.name}")
        if getattr(module, "time", None) is time:
            module.time = shim  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fields", type=int, default=60)
    ap.add_argument("--touched", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--object-align", type=int, default=64)
    ap.add_argument("--no-fill", action="store_true", help="without the line-filling model")
    args = ap.parse_args(argv)
    _cpu_clock()
    if args.no_fill:
        optimizer.fill_applicable = lambda problem: False  # type: ignore[assignment]
    for seed in range(args.seeds):
        record, entry = make_case(args.fields, args.touched, 6, seed)
        wall, cpu = time.monotonic(), time.process_time()
        r = optimize_layout(record, entry, object_align=args.object_align,
                            time_limit=args.time_limit)
        print(f"{args.fields} {args.touched} {seed} {r.lines_before:.3f} {r.lines_after:.3f} "
              f"{r.lines_lower_bound:.3f} gap {r.gap:.1%} opt {r.optimal} "
              f"dirty {r.dirty_after:.3f}/{r.dirty_lower_bound:.3f} size {r.size_after} "
              f"wall {time.monotonic() - wall:.1f}s cpu {time.process_time() - cpu:.1f}s "
              f"{r.method}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
