#!/usr/bin/env python3
"""Preprocess every C++ unit of a built Pistachio kernel with its own compile command.

  kernel_units.py --build-log KB/build.log --build-dir KB --out DIR

The kernel's make echoes each compile command (`cd DIR && gcc ... -c SRC.cc`); this script
reruns each C++ one with `-E -o DIR/<path under kernel/ with / as __>.ii` appended (gcc stops
after preprocessing), so `cachefit reorder` can analyse every unit of the configured kernel
(`#if defined(CONFIG_...)` already resolved, the same macros as the build). Assembler units
are skipped (their TCB offsets come from the generated include/tcb_layout.h). Output goes to a
temporary directory renamed to DIR when all units are done; nothing is written in the build or
source tree. It does not parse C++ (libclang does that in `cachefit reorder`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

COMPILE = re.compile(r"^cd (?P<dir>\S+) && +(?P<cmd>.*\s-c\s+(?P<src>\S+\.(?:cc|cpp|c)))\s*$")


@dataclass(frozen=True)
class Unit:
    directory: Path
    command: str
    source: str

    def name(self) -> str:
        rel = self.source.split("/kernel/", 1)[-1]
        return re.sub(r"\.(cc|cpp|c)$", "", rel).replace("/", "__") + ".ii"


def units_from_log(log: Path, build_dir: Path) -> list[Unit]:
    found: dict[str, Unit] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = COMPILE.match(line.strip())
        if m:
            found.setdefault(m["src"], Unit(build_dir / m["dir"], m["cmd"], m["src"]))
    return list(found.values())


def preprocess(unit: Unit, out: Path) -> str | None:
    target = out / unit.name()
    proc = subprocess.run(["bash", "-c", f"{unit.command} -E -o {target}"], cwd=unit.directory,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return f"{unit.source}: {proc.stderr.strip()[-400:]}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-log", type=Path, required=True)
    ap.add_argument("--build-dir", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    units = units_from_log(args.build_log, args.build_dir.resolve())
    if not units:
        print(f"kernel_units: no compile commands in {args.build_log}; rebuild the kernel "
              "(make kernel) so that its log is kept", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".units-", dir=args.out.parent))
    try:
        with ThreadPoolExecutor(args.jobs) as pool:
            errors = [e for e in pool.map(lambda u: preprocess(u, tmp), units) if e]
        if errors:
            print("kernel_units: cannot preprocess:\n  " + "\n  ".join(errors), file=sys.stderr)
            return 1
        if args.out.exists():
            shutil.rmtree(args.out)
        os.replace(tmp, args.out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    print(f"kernel_units: {len(units)} units preprocessed into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
