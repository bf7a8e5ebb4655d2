"""Random check of the shared lines oracle against the plain searches (measurement).

For random records (16 to MAX_FIELDS fields, 8 to MAX_HOT hot, lines of 32, 64 or 128
bytes; the tests' generator), the least lines of a plain best-first lines search and the
least dirty lines of a plain best-first dirty search are compared with what the native
search finds with one `block_native.LinesOracle` for both phases: the threshold lines
search over the oracle (one plan, or a first plan cut at 50 or 2 000 nodes and a second
plan with other groups and the same memo), its path replayed through the plain moves, then
the threshold dirty search that goes on with the oracle's memo. Prints every mismatch and
a summary; bench/solver/RESULTS.md ("session 13") has the runs:

    .venv/bin/python bench/solver/fuzz_shared_oracle.py SEED RECORDS MAX_FIELDS MAX_HOT

This script only measures; it is not part of the test suite (a run of 300 records takes
about a minute).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "layout"))
sys.path.insert(0, str(ROOT / "tests"))

from layout_synth import large_case  # noqa: E402
from test_layout_block_search import problem_of  # noqa: E402
from test_layout_threshold_lines import _replayed  # noqa: E402

from cachefit.layout import block_native as bn  # noqa: E402
from cachefit.layout import block_search as bs  # noqa: E402
from cachefit.layout.block_search import applicable  # noqa: E402


def _shared(p: object, cut: int | None, least: int, lim: int) -> tuple:
    """(complete, least dirty cost) of both phases over one oracle, or why not."""
    scalar = bs._Search(p, dirty=True)
    lines = bs._Search(p, dirty=False)
    oracle = bn.LinesOracle(scalar, lines)
    if oracle.handle is None:
        return ("no oracle",)
    try:
        plan = (1, 6)
        out, _ = oracle.lines_search(10**12, cut or 3 * 10**6, 1, 6, 3, 10**8)
        if cut and not out.complete:
            below = out.cost if out.cost is not None else 10**12
            second, _ = oracle.lines_search(below, 3 * 10**6, 1, 8, 3, 10**8)
            plan = (1, 8)
            if second.complete and second.cost is None:   # nothing below: the first's
                second = bn.BestFirstOutcome(out.cost, out.path, out.cost, True, 0, 0)
            out = second
        if not out.complete or out.cost != least:
            return ("lines", out.complete, out.cost)
        if out.path is not None and _replayed(lines, out.path) != least:
            return ("replay",)
        dirty, _ = bn.threshold(scalar, lim, 3 * 10**6, groups=plan[0],
                                group_size=plan[1], group_cap=10**8,
                                floor=(least, scalar.scale), oracle_cap=10**8, nest=3,
                                oracle=oracle)
        return (dirty.complete, dirty.cost)
    finally:
        oracle.close()


def main() -> int:
    seed, records, max_fields, max_hot = (int(a) for a in sys.argv[1:5])
    rng = random.Random(seed)
    ok = skip = bad = 0
    began = time.time()
    for _ in range(records):
        n = rng.randint(16, max_fields)
        hot = rng.randint(8, min(n, max_hot))
        case = rng.randint(0, 10**6)
        line = rng.choice((32, 64, 128))
        p = problem_of(*large_case(n, hot, case), line=line)
        if not applicable(p):
            skip += 1
            continue
            out, _ = bn.best_first(bs._Search(p, dirty=False), 10**12, 3 * 10**6)
        if not out.complete:
            skip += 1
            continue
        least = out.cost
        scalar = bs._Search(p, dirty=True)
        lim = (least + 1) * scalar.scale - 1
        plain, _ = bn.best_first(scalar, lim, 3 * 10**6, partial=False)
        if not plain.complete:
            skip += 1
            continue
        got = [_shared(p, cut, least, lim) for cut in (None, 50, 2000)]
        if any(g not in ((True, plain.cost), ("no oracle",)) for g in got):
            bad += 1
            print("MISMATCH", n, hot, case, line, plain.cost, got, flush=True)
        else:
            ok += 1
    print("ok", ok, "bad", bad, "skipped", skip, f"{time.time() - began:.0f}s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
