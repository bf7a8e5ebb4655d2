#!/usr/bin/env python3
"""COCOON's memcpy question: does a plain C byte loop, compiled for the target, keep up with
glibc's memcpy? Builds the loop at -O2, -O3 and -O3 -march=native (gcc and clang-19 when
present), times it against memcpy in the same process (median of repetitions) at 8 B .. 1 MiB,
and prints throughput ratios loop/memcpy. Usage: bench/memcpy/run.py [--reps N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEVELS = [("-O2", ["-O2"]), ("-O3", ["-O3"]), ("-O3 -march=native", ["-O3", "-march=native"])]
KEEP_LOOP = {"gcc": ["-fno-builtin", "-fno-tree-loop-distribute-patterns"],
             "clang-19": ["-fno-builtin"]}


def build(cc: str, flags: list[str], out: Path) -> None:
    subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", *flags, *KEEP_LOOP[cc], "-c",
                    str(HERE / "bytecopy.c"), "-o", str(out) + ".o"], check=True)
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", str(HERE / "driver.c"),
                    str(out) + ".o", "-o", str(out)], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cc in [c for c in KEEP_LOOP if shutil.which(c)]:
            for label, flags in LEVELS:
                exe = Path(tmp) / f"copy-{cc}-{len(rows)}"
                build(cc, flags, exe)
                out = subprocess.run([str(exe), str(args.reps)], capture_output=True,
                                     text=True, check=True).stdout
                for line in out.split("\n"):
                    if line.strip():
                        n, loop_ns, libc_ns = line.split()
                        rows.append({"compiler": cc, "flags": label, "bytes": int(n),
                                     "loop_gbps": int(n) / float(loop_ns),
                                     "memcpy_gbps": int(n) / float(libc_ns),
                                     "ratio": float(libc_ns) / float(loop_ns)})
    sizes = sorted({r["bytes"] for r in rows})
    configs = list(dict.fromkeys((r["compiler"], r["flags"]) for r in rows))
    print("throughput of the byte loop / glibc memcpy (1.00 = as fast; median of "
          f"{args.reps} runs)")
    print(f"{'bytes':>8} " + " ".join(f"{c + ' ' + f:>26}" for c, f in configs))
    for n in sizes:
        cells = [next(r for r in rows if r["bytes"] == n and (r["compiler"], r["flags"]) == cf)
                 for cf in configs]
        print(f"{n:>8} " + " ".join(f"{c['ratio']:>26.2f}" for c in cells))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
