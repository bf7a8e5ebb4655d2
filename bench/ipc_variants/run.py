#!/usr/bin/env python3
"""Cost of one IPC per tcb variant of examples/ipc: the measurement behind `make demo`'s table.

Measures the two variants that exist in the repository, "virtual hierarchy"
(-DTCB_VARIANT_MIXIN) and "hand-tuned flat original" (tcb_flat.h), plus any number of
`--variant NAME=HEADER` variants: HEADER is a header defining class `tcb` that the pipeline
wrote (the flattened mixin hierarchy, an alphabetically ordered flat tcb, the
cachefit-reordered tcb), built with -DTCB_HEADER. This script never generates or edits a
header. Writes OUT/summary.md and OUT/summary.json and prints the table
(examples/ipc/demo/variant_bench.py has the method).

Usage: .venv/bin/python bench/ipc_variants/run.py [--out DIR] [--variant NAME=HEADER]...
       [--cxx g++] [--reps 11] [--iterations 5000] [--inner-reps 21] [--valgrind-rounds 512]
       [--no-valgrind]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cachefit.errors import CachefitError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "ipc" / "demo"))
from variant_bench import (  # noqa: E402
    REFERENCE_VARIANT,
    Variant,
    format_table,
    measure_variants,
)

BUILTIN = [
    Variant("virtual hierarchy", ["-DTCB_VARIANT_MIXIN"]),
    Variant(REFERENCE_VARIANT, []),
]


def header_variant(spec: str) -> Variant:
    """NAME=HEADER -> a variant built with -DTCB_HEADER="/abs/HEADER"."""
    name, sep, header = spec.partition("=")
    if not sep or not name.strip() or not header:
        raise argparse.ArgumentTypeError(f"{spec!r}: expected NAME=HEADER")
    path = Path(header).resolve()
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{spec!r}: {path} is not a file")
    if any(c in str(path) for c in '"\\\n'):
        raise argparse.ArgumentTypeError(f"{spec!r}: the header path contains \", \\ or a "
                                         "newline")
    return Variant(name.strip(), [f'-DTCB_HEADER="{path}"'])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "ipc_variants")
    ap.add_argument("--variant", type=header_variant, action="append", default=[],
                    metavar="NAME=HEADER", help="an extra tcb header (repeatable)")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--reps", type=int, default=11, help="native runs per variant, round-robin")
    ap.add_argument("--iterations", type=int, default=5000, help="pingpong -n per native run")
    ap.add_argument("--inner-reps", type=int, default=21, help="pingpong -r per native run")
    ap.add_argument("--valgrind-rounds", type=int, default=512,
                    help="N: valgrind runs use N and 2N rounds (a multiple of 8)")
    ap.add_argument("--no-valgrind", action="store_true",
                    help="skip the deterministic valgrind counts")
    args = ap.parse_args(argv)
    try:
        rows = measure_variants([*BUILTIN, *args.variant], args.out, cxx=args.cxx,
                                reps=args.reps, iterations=args.iterations,
                                inner_reps=args.inner_reps, cachegrind=not args.no_valgrind,
                                valgrind_rounds=args.valgrind_rounds)
    except CachefitError as err:
        print(err.render(), file=sys.stderr)
        return err.exit_code
    print(format_table(rows))
    print(f"\n{args.out / 'summary.md'}, {args.out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
