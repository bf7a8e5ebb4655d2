#!/usr/bin/env python3
"""Slowdown of cachefit's compile-time tracer, compared with valgrind DHAT and lackey.

Workloads (each built plain and as profile builds, all with clang-19 -O2 -gdwarf-4 so
valgrind 3.19 can read the debug info):
  ipc   examples/ipc pingpong-flat (type tcb, entry ipc), built with its own Makefile;
  zlib  minigzip from the Debian source package zlib (type deflate_state, entry
        longest_match), built with its own configure and make; the source is fetched
        with `apt-get source zlib` into the work directory (needs a deb-src line, see
        README.md) and is never copied into the repository.
Profile builds: `allowlist` ([trace] instrument = the critical path), `allowlist-calls`
(the same with CACHEFIT_INLINE_CHECKS=0: every access calls the runtime, the build
before the checks were inlined) and `whole` (every function instrumented).
For each binary it reports the median wall time and the median CPU time (user + system,
from wait4: less disturbed than wall time by other jobs on a shared machine) of REPS
runs (traced = with CACHEFIT_TRACE_DIR set, so the trace is written), one run of DHAT
and of lackey --trace-mem=yes on the plain binary, the slowdowns (ratios of CPU times
measured in the same run), whether the allowlisted profile equals the whole-program
one, and with --callgrind the instructions executed (callgrind, deterministic).
Results go to stdout (a table) and --json.
This script only builds into the work directory; it changes nothing in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]
CFLAGS = "-O2 -gdwarf-4"


def sh(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
       quiet: bool = True) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=quiet, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout if quiet else ''}"
                 f"{proc.stderr if quiet else ''}")


@dataclass
class Timing:
    """Median wall and CPU (user + system) seconds of some runs, and the fastest wall."""

    wall: float
    cpu: float
    wall_min: float


def timed(cmd: list[str], stdin: Path | None, env: dict[str, str], reps: int) -> Timing:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(reps):
        with open(stdin or os.devnull, "rb") as fin:
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=fin, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            walls.append(time.perf_counter() - start)
            cpus.append(usage.ru_utime + usage.ru_stime)
            proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"failed ({code}): {' '.join(cmd)}")
    return Timing(statistics.median(walls), statistics.median(cpus), min(walls))


def instructions(cmd: list[str], stdin: Path | None, env: dict[str, str]) -> int:
    """Instructions executed (callgrind's Ir total), valgrind's start-up included."""
    with tempfile.TemporaryDirectory() as tmp, open(stdin or os.devnull, "rb") as fin:
        out = Path(tmp) / "cg.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               *cmd], stdin=fin, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, check=False)
        if proc.returncode != 0:
            sys.exit(f"callgrind failed: {' '.join(cmd)}")
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    sys.exit("callgrind wrote no totals")


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    for k in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
              "CACHEFIT_TRACE_DIR"):
        env.pop(k, None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def write_toml(path: Path, types: str, entry: str, extra: str = "") -> Path:
    path.write_text(f'[trace]\ntypes = ["{types}"]\nentry = ["{entry}"]\n{extra}')
    return path


# ------------------------------------------------------------------ workloads

def build_ipc(work: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    env = base_env()
    allow = 'instrument = ["ipc", "tcb::charge_timeslice", "tcb::switch_to"]\n'
    for variant, extra in (("plain", None), ("allowlist", allow), ("allowlist-calls", allow),
                           ("whole", "")):
        build = work / "ipc" / variant
        target = build / "pingpong-flat"
        if not target.exists():
            build.mkdir(parents=True, exist_ok=True)
            venv = dict(env)
            cxx = "clang++-19"
            if extra is not None:
                cfg = write_toml(build / "cachefit.toml", "tcb", "ipc", extra)
                venv.update(CACHEFIT_MODE="profile", CACHEFIT_CXX="clang++-19",
                            CACHEFIT_CONFIG=str(cfg))
                if variant.endswith("-calls"):
                    venv["CACHEFIT_INLINE_CHECKS"] = "0"
                cxx = "cachefit c++"
            sh(["make", "-s", "-C", str(REPO / "examples" / "ipc"), f"CXX={cxx}",
                f"BUILD={build}", f"OPT={CFLAGS}", "CXXFLAGS=$(OPT) $(CXXSTD) $(WARN)",
                str(target)], env=venv)
        out[variant] = target
    return out


def fetch_zlib(work: Path) -> Path:
    src_root = work / "debian-src"
    found = sorted(src_root.glob("zlib-*/deflate.c"))
    if found:
        return found[0].parent
    src_root.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["apt-get", "source", "zlib"], cwd=src_root, capture_output=True,
                          text=True, check=False)
    found = sorted(src_root.glob("zlib-*/deflate.c"))
    if proc.returncode != 0 or not found:
        sys.exit("apt-get source zlib failed; add a deb-src line and run apt-get update "
                 f"(see bench/trace/README.md)\n{proc.stderr}")
    return found[0].parent


def build_zlib(work: Path) -> dict[str, Path]:
    src = fetch_zlib(work)
    out: dict[str, Path] = {}
    env = base_env()
    allow = 'instrument = ["longest_match"]\n'
    for variant, extra in (("plain", None), ("allowlist", allow), ("allowlist-calls", allow),
                           ("whole", "")):
        build = work / "zlib" / variant
        target = build / "minigzip"
        if not target.exists():
            if build.exists():
                shutil.rmtree(build)
            shutil.copytree(src, build)
            venv = dict(env, CFLAGS=CFLAGS)
            cc = "clang-19"
            if extra is not None:
                cfg = write_toml(build / "cachefit.toml", "deflate_state", "longest_match",
                                 'allocators = ["zalloc"]\ndeallocators = ["zfree"]\n' + extra)
                venv.update(CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19",
                            CACHEFIT_CONFIG=str(cfg))
                if variant.endswith("-calls"):
                    venv["CACHEFIT_INLINE_CHECKS"] = "0"
                cc = "cachefit cc"
            venv["CC"] = cc
            sh(["./configure", "--static"], cwd=build, env=venv)
            sh(["make", "-s", "minigzip"], cwd=build, env=venv)
        out[variant] = target
    return out


def make_input(path: Path, size: int) -> Path:
    if path.exists() and path.stat().st_size == size:
        return path
    rng = random.Random(20240501)
    words = [''.join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    chunks: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) + "\n"
        chunks.append(line)
        total += len(line)
    path.write_bytes("".join(chunks).encode()[:size])
    return path


# ------------------------------------------------------------------ measuring

VARIANTS = ("allowlist", "allowlist-calls", "whole")


def measure(name: str, bins: dict[str, Path], args: list[str], stdin: Path | None, reps: int,
            lackey: bool, callgrind: bool) -> dict[str, object]:
    env = base_env()
    res: dict[str, object] = {"workload": name, "args": args}
    timings: dict[str, Timing] = {}
    timings["plain"] = timed([str(bins["plain"]), *args], stdin, env, reps)
    profiles = {}
    for variant in VARIANTS:
        with tempfile.TemporaryDirectory() as rd:
            tenv = dict(env, CACHEFIT_TRACE_DIR=rd)
            timings[variant] = timed([str(bins[variant]), *args], stdin, tenv, reps)
        with tempfile.TemporaryDirectory() as tmp:
            prof = Path(tmp) / "p.json"
            cmd = [str(bins[variant]), *args]
            if stdin is not None:
                cmd = ["sh", "-c", f'"$0" "$@" < {stdin} > /dev/null', *cmd]
            proc = subprocess.run([*CACHEFIT, "trace", "-o", str(prof), "--", *cmd], env=env,
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"cachefit trace failed:\n{proc.stderr}")
            data = json.loads(prof.read_text())
            profiles[variant] = (data["invocations"], data["types"])
    res["invocations"] = profiles["whole"][0]
    res["allowlist_profile_equals_whole"] = profiles["allowlist"] == profiles["whole"]
    res["calls_profile_equals_inlined"] = profiles["allowlist-calls"] == profiles["allowlist"]
    vg = ["valgrind", "--tool=dhat", "--dhat-out-file=/dev/null"]
    timings["dhat"] = timed([*vg, str(bins["plain"]), *args], stdin, env, max(1, reps // 3))
    if lackey:
        lk = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=/dev/null"]
        timings["lackey"] = timed([*lk, str(bins["plain"]), *args], stdin, env, 1)
    for key, t in timings.items():
        res[f"{key}_wall_s"] = round(t.wall, 4)
        res[f"{key}_cpu_s"] = round(t.cpu, 4)
        res[f"{key}_wall_min_s"] = round(t.wall_min, 4)
    plain = timings["plain"]
    for key, t in timings.items():
        if key != "plain":
            res[f"{key}_x"] = round(t.cpu / plain.cpu, 2)
            res[f"{key}_wall_x"] = round(t.wall / plain.wall, 2)
    res["dhat_over_allowlist"] = round(timings["dhat"].cpu / timings["allowlist"].cpu, 1)
    res["dhat_over_allowlist_wall"] = round(timings["dhat"].wall / timings["allowlist"].wall, 1)
    if callgrind:
        with tempfile.TemporaryDirectory() as rd:
            tenv = dict(env, CACHEFIT_TRACE_DIR=rd)
            ir = {v: instructions([str(bins[v]), *args], stdin, env if v == "plain" else tenv)
                  for v in ("plain", *VARIANTS)}
        for v, n in ir.items():
            res[f"{v}_instructions"] = n
            if v != "plain":
                res[f"{v}_instructions_x"] = round(n / ir["plain"], 2)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_work = Path(os.environ.get("CACHEFIT_CACHE_DIR",
                                       Path.home() / ".cache" / "cachefit")) / "bench-trace"
    ap.add_argument("--work", type=Path, default=default_work,
                    help="build and download directory (default %(default)s)")
    ap.add_argument("--reps", type=int, default=9,
                    help="runs per timing (median; DHAT gets a third)")
    ap.add_argument("--no-lackey", action="store_true", help="skip lackey (slow)")
    ap.add_argument("--only", choices=["ipc", "zlib"], help="one workload")
    ap.add_argument("--zlib-mb", type=int, default=4, help="size of the zlib input in MiB")
    ap.add_argument("--ipc-rounds", type=int, default=20000, help="pingpong -n")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions with callgrind (deterministic)")
    args = ap.parse_args()
    for tool in ("clang-19", "clang++-19", "valgrind", "make"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    if args.only in (None, "ipc"):
        bins = build_ipc(args.work)
        # The example's default (clflush before each IPC, as in the paper) and, harder for
        # the tracer, no cache pressure at all.
        for flush in ("clflush", "none"):
            results.append(measure(f"ipc (examples/ipc pingpong-flat, tcb/ipc, -f {flush})",
                                   bins, ["-n", str(args.ipc_rounds), "-r", "3", "-f", flush],
                                   None, args.reps, not args.no_lackey, args.callgrind))
    if args.only in (None, "zlib"):
        bins = build_zlib(args.work)
        data = make_input(args.work / f"input-{args.zlib_mb}M.txt", args.zlib_mb << 20)
        results.append(measure("zlib (Debian zlib minigzip, deflate_state/longest_match)", bins,
                               [], data, args.reps, not args.no_lackey, args.callgrind))
    for r in results:
        print(f"\n{r['workload']}  args: {' '.join(r['args']) or '< input'}")  # type: ignore[arg-type]
        for k, v in r.items():
            if k not in ("workload", "args"):
                print(f"  {k:34} {v}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
