"""Random check of block_search on cache-aligned objects against every order (measurement).

For random records of FIELDS fields (the tests' generator `random_case`, with a share of
members aligned to the line; lines of 32 or 64 bytes, objects aligned to the line), the
least lines and the least dirty lines among them over every declaration order (the
independent oracle of tests/layout/layout_synth.py, all FIELDS! orders) are compared with
what `block_search` proves natively (the search over declaration orders, `natural`), from
an upper bound above everything, from the optimum itself, and told the optimum's lines as
a known lower bound. Prints every mismatch and a summary; bench/solver/RESULTS.md
("session 14") has the runs:

    .venv/bin/python bench/solver/fuzz_natural.py SEED RECORDS FIELDS

This script only measures; it is not part of the test suite (100 records of 7 fields take
about a minute).
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "layout"))

from layout_synth import TYPES, Oracle, access, c_layout, profile_entry, typed  # noqa: E402

from cachefit.layout.block_search import block_search, natural  # noqa: E402
from cachefit.layout.constraints import LayoutConstraints  # noqa: E402
from cachefit.layout.problem import build_problem  # noqa: E402
from cachefit.layout.realize import realize  # noqa: E402


def _record(rng: random.Random, n: int, line: int) -> tuple:
    kinds = TYPES + [("struct line", line, line)]
    record = c_layout("rnd", [(f"f{i}", *rng.choice(kinds)) for i in range(n)])
    names = [f.name for f in record.fields]
    sequences = []
    for _ in range(rng.randint(1, 4)):
        accesses = [access(record, role, name, rng.choice("rrw"))
                    for role in range(rng.randint(1, 2))
                    for name in rng.sample(names, rng.randint(1, n))]
        sequences.append((rng.randint(1, 9), accesses))
    return record, profile_entry(record, sequences)


def main(argv: list[str]) -> int:
    seed, records, fields = (int(a) for a in argv[:3])
    rng = random.Random(seed)
    bad = checked = 0
    began = time.monotonic()
    for i in range(records):
        line = rng.choice([32, 64])
        record, entry = _record(rng, fields, line)
        problem = build_problem(record, typed(entry), cache_line=line, object_align=line,
                                relax_align=False, constraints=LayoutConstraints(),
                                allow_growth=False, merge=False)
        if not natural(problem) or not problem.hot:
            continue
        oracle = Oracle(record, entry, cache_line=line, object_align=line)
        want = min(oracle.cost(order) for order in
                   itertools.permutations([f.name for f in record.fields]))
        got = []
        for upper, lower in (((want[0] + 10**6, 0), 0), (want, 0),
                             ((want[0] + 10**6, 0), want[0])):
            r = block_search(problem, upper=upper, max_nodes=10**8, lower=lower)
            real = None
            if r.found:
                order = realize(problem, r.found[0])
                real = oracle.cost([f for u in order for f in problem.units[u].fields])
            got.append((r.lines_exact, r.lines_bound, r.dirty_bound, real))
        ok = (got[0][:2] == (True, want[0]) and got[0][3] is not None
              and got[0][3][0] == want[0] and got[1][:3] == (True, want[0], want[1])
              and got[2][:2] == (True, want[0]) and got[2][3] is not None
              and got[2][3][0] == want[0])
        checked += 1
        if not ok:
            bad += 1
            print(f"mismatch: record {i} line {line} want {want} got {got}", flush=True)
    print(f"seed {seed}: {checked} records of {fields} fields, {bad} mismatches, "
          f"{time.monotonic() - began:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
