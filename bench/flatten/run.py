#!/usr/bin/env python3
"""Cost of the mixin hierarchy, and of its flattened form, on the IPC path of examples/ipc.

Builds three variants of examples/ipc/pingpong.cc with each compiler at -O2:

  (a) mixin      the virtual mix-in hierarchy (-DTCB_VARIANT_MIXIN, tcb_mixin.h)
  (b) flattened  the same unit, preprocessed, flattened by `cachefit.flatten.flatten_unit`
                 (the build-time mode: between the preprocessor and the compiler), compiled
  (c) flat       the hand-written flat class (tcb_flat.h)

checks that all three compute the same checksums, then measures

  * instructions per IPC, deterministic: valgrind --tool=callgrind with collection switched
    on only inside ipc() (--toggle-collect=_Z3ipcP3tcbS0_j), total Ir / number of IPCs;
  * cycles per IPC with rdtsc (x86 only): pingpong's own `ipc_cycles_median`, the median over
    several interleaved runs (noisy; the instruction counts are the figures to compare).

Usage: bench/flatten/run.py [--compilers g++,clang++-19] [-n ROUNDS] [-r REPS]
                            [--cycle-runs K] [--flush clflush,none] [--no-cycles] [--keep DIR]
"""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from cachefit.flatten import flatten_unit  # noqa: E402

EXAMPLE = REPO / "examples" / "ipc"
STD = "-std=c++17"
IPC_SYMBOL = "_Z3ipcP3tcbS0_j"
KEYS = ("checksum", "state_checksum", "ipcs")


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"run.py: {' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return proc


def values(out: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in out.splitlines() if "=" in ln)


def build(cxx: str, work: Path) -> dict[str, tuple[Path, int]]:
    """The three binaries and the sizeof(tcb) each reports."""
    src = EXAMPLE / "pingpong.cc"
    out: dict[str, Path] = {}
    out["mixin"] = work / "mixin"
    sh([cxx, "-O2", STD, "-DTCB_VARIANT_MIXIN", "-o", str(out["mixin"]), str(src)])
    pre = work / "pingpong-mixin.ii"
    sh([cxx, STD, "-E", "-DTCB_VARIANT_MIXIN", "-o", str(pre), str(src)])
    result = flatten_unit(str(pre), [STD], "tcb")
    flat_ii = work / "pingpong-flattened.ii"
    flat_ii.write_text(result.text())
    out["flattened"] = work / "flattened"
    sh([cxx, "-O2", STD, "-o", str(out["flattened"]), str(flat_ii)])
    out["flat"] = work / "flat"
    sh([cxx, "-O2", STD, "-o", str(out["flat"]), str(src)])
    return {k: (p, 0) for k, p in out.items()}


def instructions_per_ipc(exe: Path, work: Path, rounds: int, reps: int) -> tuple[float, str]:
    cg = work / f"callgrind.{exe.name}.out"
    proc = sh(["valgrind", "--tool=callgrind", "--demangle=no", f"--toggle-collect={IPC_SYMBOL}",
               f"--callgrind-out-file={cg}", str(exe), "-n", str(rounds), "-r", str(reps),
               "-f", "none"])
    ipcs = int(values(proc.stdout)["ipcs"])
    text = cg.read_text()
    m = re.search(r"^(?:totals|summary):\s+(\d+)", text, re.M)
    if not m:
        sys.exit(f"run.py: no instruction total in {cg}")
    return int(m.group(1)) / ipcs, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compilers", default="g++,clang++-19")
    ap.add_argument("-n", type=int, default=1000, help="ping-pong rounds (callgrind runs)")
    ap.add_argument("-r", type=int, default=3, help="repetitions (callgrind runs)")
    ap.add_argument("--cycle-runs", type=int, default=7,
                    help="interleaved native runs per variant for the rdtsc figures")
    ap.add_argument("--flush", default="clflush,none",
                    help="pingpong cache-pressure modes for the rdtsc figures")
    ap.add_argument("--no-cycles", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    opts = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("run.py: valgrind is not installed")
    rdtsc = platform.machine() in ("x86_64", "AMD64", "i686") and not opts.no_cycles
    names = {"mixin": "(a) mixin hierarchy", "flattened": "(b) flattened by cachefit",
             "flat": "(c) hand-written flat"}
    rows = []
    for cxx in opts.compilers.split(","):
        if shutil.which(cxx) is None:
            print(f"run.py: {cxx} not found, skipped", file=sys.stderr)
            continue
        work = Path(opts.keep) / cxx if opts.keep else Path(tempfile.mkdtemp(prefix="cf-bench-"))
        work.mkdir(parents=True, exist_ok=True)
        bins = {k: p for k, (p, _) in build(cxx, work).items()}
        ref = None
        instr: dict[str, float] = {}
        size: dict[str, str] = {}
        for k, exe in bins.items():
            per_ipc, out = instructions_per_ipc(exe, work, opts.n, opts.r)
            v = values(out)
            key = tuple(v[x] for x in KEYS)
            if ref is None:
                ref = key
            elif key != ref:
                sys.exit(f"run.py: {cxx} {k} computes different checksums: {key} != {ref}")
            instr[k] = per_ipc
            size[k] = v["sizeof_tcb"]
        cycles: dict[str, dict[str, float]] = {k: {} for k in bins}
        if rdtsc:
            for mode in opts.flush.split(","):
                samples: dict[str, list[float]] = {k: [] for k in bins}
                for _ in range(opts.cycle_runs):
                    for k, exe in bins.items():
                        out = sh([str(exe), "-f", mode]).stdout
                        samples[k].append(float(values(out)["ipc_cycles_median"]))
                for k in bins:
                    cycles[k][mode] = statistics.median(samples[k])
        for k in bins:
            rows.append((cxx, names[k], size[k], instr[k], instr[k] / instr["flat"] - 1,
                         {m: (c, c / cycles["flat"][m] - 1) for m, c in cycles[k].items()}))
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    modes = opts.flush.split(",") if rdtsc else []
    print(f"IPC path of examples/ipc, -O2. instr/IPC: callgrind Ir inside ipc() / IPCs "
          f"(pingpong -n {opts.n} -r {opts.r} -f none).")
    if modes:
        print(f"cycles/IPC: rdtsc, pingpong defaults (-n 5000 -r 21) with -f MODE, median of "
              f"{opts.cycle_runs} interleaved runs.")
    head = f"{'compiler':<11} {'variant':<27} {'sizeof':>6} {'instr/IPC':>9} {'vs (c)':>8}"
    for m in modes:
        head += f" {'cyc ' + m:>12} {'vs (c)':>7}"
    print(head)
    for cxx, name, sz, ins, d_ins, cyc in rows:
        line = f"{cxx:<11} {name:<27} {sz:>6} {ins:9.1f} {d_ins * 100:+7.2f}%"
        for m in modes:
            c, d = cyc[m]
            line += f" {c:12.1f} {d * 100:+6.1f}%"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
