#!/usr/bin/env python3
"""Slowdown of cachefit's compile-time tracer, compared with valgrind DHAT and lackey.

Workloads (each built plain and as profile builds, all with clang-19 -O2 -gdwarf-4 so
valgrind 3.19 can read the debug info; bench/trace/bench_builds.py):
  ipc   examples/ipc pingpong-flat (type tcb, entry ipc), with -f clflush and -f none;
  zlib  minigzip from the Debian source package zlib (type deflate_state, entry
        longest_match) on deterministic pseudo-text of --zlib-mib sizes; the source is
        fetched with `apt-get source zlib` into the work directory (needs a deb-src line,
        see README.md) and is never copied into the repository.
Profile builds: `allowlist` ([trace] instrument = the critical path), `allowlist-calls`
(the same with CACHEFIT_INLINE_CHECKS=0: every access calls the runtime) and `whole`
(every function instrumented); traced runs have CACHEFIT_TRACE_DIR set, so the trace is
written.
Schedule (bench/trace/interleaved_schedule.py): one warm-up round, then --reps rounds;
each round runs plain, the three profile builds, DHAT on the plain binary, and the
start-up runs (plain, allowlist and DHAT on an empty input), once each in a seeded
shuffled order; the rounds of every workload run first, the single slow runs after.
Ratios (bench/trace/round_stats.py) are given as the ratio of medians and as the median,
quartiles and range of the per-round ratios, by CPU time (user + system from wait4;
primary) and wall time; "long-run" ratios subtract each side's start-up run of the same
round. Lackey --trace-mem=yes runs once per ipc workload and once on a --lackey-mib zlib
input, against five plain runs on the same input made just before it.
With --callgrind the instructions executed (callgrind, deterministic) are counted too.
The script checks that the allowlisted profile equals the whole-program one and the
checks-as-calls one, and records which runtime archive and compiler the profile builds
used. Results go to stdout (a table), stderr (progress) and --json (format version 2,
docs/trace-bench-results.md). It builds only into the work directory and changes nothing
in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_builds import (  # noqa: E402
    PROFILE_VARIANTS,
    Builds,
    build_ipc,
    build_zlib,
    make_input,
    runtime_record,
)
from interleaved_schedule import Job, null_device, run_once, run_rounds  # noqa: E402
from round_stats import RatioSpec, Sample, Term, ratio_summary, variant_summary  # noqa: E402

CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]
FORMAT = "cachefit-trace-bench"
VERSION = 2
# Output files go to the null device of the run (interleaved_schedule.null_device).
DHAT = ["valgrind", "--tool=dhat", "--dhat-out-file={null}"]
LACKEY = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file={null}"]

# The targets: the allowlisted run at most 3x the plain one, and DHAT at least
# 10x slower than the allowlisted run.
RATIOS = (
    RatioSpec("allowlist_x", Term("allowlist"), Term("plain"), 3.0, at_least=False),
    RatioSpec("allowlist-calls_x", Term("allowlist-calls"), Term("plain")),
    RatioSpec("whole_x", Term("whole"), Term("plain")),
    RatioSpec("dhat_x", Term("dhat"), Term("plain")),
    RatioSpec("dhat_over_allowlist", Term("dhat"), Term("allowlist"), 10.0),
    RatioSpec("dhat_over_whole", Term("dhat"), Term("whole")),
    RatioSpec("long_run_allowlist_x", Term("allowlist", "allowlist_startup"),
              Term("plain", "plain_startup"), 3.0, at_least=False),
    RatioSpec("long_run_dhat_over_allowlist", Term("dhat", "dhat_startup"),
              Term("allowlist", "allowlist_startup"), 10.0),
)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC] {msg}", file=sys.stderr,
          flush=True)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def uptime_now() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True,
                          check=False).stdout.strip()


def instructions(cmd: list[str], stdin: Path | None, env: dict[str, str], null: Path) -> int:
    """Instructions executed (callgrind's Ir total), valgrind's start-up included."""
    with (tempfile.TemporaryDirectory() as tmp, open(stdin or null, "rb") as fin,
          open(null, "wb") as sink):
        out = Path(tmp) / "cg.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               *cmd], stdin=fin, stdout=sink, stderr=sink, env=env,
                              check=False)
        if proc.returncode != 0:
            sys.exit(f"callgrind failed: {' '.join(cmd)}")
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    sys.exit("callgrind wrote no totals")


def traced_profile(binary: Path, args: list[str], stdin: Path | None,
                   env: dict[str, str], null: Path) -> tuple[int, object]:
    """(invocations, types) of the profile `cachefit trace` writes for one run."""
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "p.json"
        cmd = [str(binary), *args]
        if stdin is not None:
            cmd = ["sh", "-c", f'"$0" "$@" < {stdin} > {null}', *cmd]
        proc = subprocess.run([*CACHEFIT, "trace", "-o", str(prof), "--", *cmd], env=env,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"cachefit trace failed:\n{proc.stderr}")
        data = json.loads(prof.read_text())
        return data["invocations"], data["types"]


@dataclass
class Workload:
    """One measured configuration: binaries, arguments, input, start-up run."""

    name: str
    bins: dict[str, Path]
    args: list[str]
    stdin: Path | None
    startup_args: list[str]
    heavy: bool                     # lackey and callgrind run on it
    runtime: dict[str, object]      # which runtime archive its profile builds linked
    null: Path                      # the null device for input and output
    lackey_stdin: Path | None = None    # a smaller input for lackey, else stdin


def measure_rounds(w: Workload, reps: int, seed: int, env: dict[str, str]) -> dict[str, object]:
    """Interleaved rounds of one workload (in-round orders drawn with `seed`) and the
    profile checks."""
    log(f"{w.name}: load {loadavg()}")
    res: dict[str, object] = {"workload": w.name, "args": w.args, "stdin_bytes":
                              w.stdin.stat().st_size if w.stdin else None,
                              "startup_args": w.startup_args, "seed": seed,
                              "load_before": loadavg(),
                              "started_utc": time.strftime("%H:%M:%S", time.gmtime())}
    bins, args, stdin = w.bins, w.args, w.stdin
    with tempfile.TemporaryDirectory() as traces:
        def tenv(variant: str) -> dict[str, str]:
            d = Path(traces) / variant
            d.mkdir(exist_ok=True)
            return dict(env, CACHEFIT_TRACE_DIR=str(d))

        plain = str(bins["plain"])
        dhat = [a.format(null=w.null) for a in DHAT]
        jobs = [Job("plain", [plain, *args], stdin, env, w.null)]
        jobs += [Job(v, [str(bins[v]), *args], stdin, tenv(v), w.null)
                 for v in PROFILE_VARIANTS]
        jobs += [Job("dhat", [*dhat, plain, *args], stdin, env, w.null),
                 Job("plain_startup", [plain, *w.startup_args], None, env, w.null),
                 Job("allowlist_startup", [str(bins["allowlist"]), *w.startup_args], None,
                     tenv("allowlist_startup"), w.null),
                 Job("dhat_startup", [*dhat, plain, *w.startup_args], None, env, w.null)]
        rounds = run_rounds(jobs, reps, seed, progress=lambda m: log(f"  {m}"))
    res["load_after"] = loadavg()
    res["finished_utc"] = time.strftime("%H:%M:%S", time.gmtime())
    profiles = {v: traced_profile(bins[v], args, stdin, env, w.null) for v in PROFILE_VARIANTS}
    res["invocations"] = profiles["whole"][0]
    res["allowlist_profile_equals_whole"] = profiles["allowlist"] == profiles["whole"]
    res["calls_profile_equals_inlined"] = profiles["allowlist-calls"] == profiles["allowlist"]
    res["variants"] = {j.name: variant_summary([r[j.name] for r in rounds]) for j in jobs}
    res["ratios"] = {spec.name: ratio_summary(spec, rounds) for spec in RATIOS}
    res["rounds"] = [{k: [round(s.cpu, 4), round(s.wall, 4)] for k, s in r.items()}
                     for r in rounds]
    res["runtime"] = w.runtime
    return res


def measure_lackey(w: Workload, res: dict[str, object], env: dict[str, str]) -> None:
    """One lackey --trace-mem=yes run on the workload's lackey input, compared with five
    runs of the plain build on that input made just before it."""
    stdin = w.lackey_stdin or w.stdin
    log(f"{w.name}: lackey (one run, stdin {stdin})")
    plain = Job("plain", [str(w.bins["plain"]), *w.args], stdin, env, w.null)
    plain_cpu = statistics.median(run_once(plain).cpu for _ in range(5))
    lackey = [a.format(null=w.null) for a in LACKEY]
    lk: Sample = run_once(Job("lackey", [*lackey, *plain.cmd], stdin, env, w.null))
    res["lackey"] = {"stdin_bytes": stdin.stat().st_size if stdin else None,
                     "cpu_s": round(lk.cpu, 3), "wall_s": round(lk.wall, 3),
                     "plain_cpu_s": round(plain_cpu, 4),
                     "over_plain_cpu": round(lk.cpu / plain_cpu, 1)}


def measure_instructions(w: Workload, res: dict[str, object], env: dict[str, str]) -> None:
    """Instructions executed by each build under callgrind (deterministic)."""
    log(f"{w.name}: callgrind")
    with tempfile.TemporaryDirectory() as rd:
        traced = dict(env, CACHEFIT_TRACE_DIR=rd)
        ir = {v: instructions([str(w.bins[v]), *w.args], w.stdin,
                              env if v == "plain" else traced, w.null)
              for v in ("plain", *PROFILE_VARIANTS)}
    res["instructions"] = dict(ir)
    res["instructions_x"] = {v: round(n / ir["plain"], 2) for v, n in ir.items()
                             if v != "plain"}


def _fmt_ratio(r: dict[str, object]) -> str:
    pr = r.get("per_round_cpu")
    if not isinstance(pr, dict):
        return f"{r['of_medians_cpu']} (no usable rounds)"
    pw = r["per_round_wall"]
    assert isinstance(pw, dict)
    text = (f"{pr['median']:>6} [IQR {pr['q1']}-{pr['q3']}, range {pr['min']}-{pr['max']}]"
            f"  of medians {r['of_medians_cpu']}  | wall {pw['median']} "
            f"[{pw['min']}-{pw['max']}]")
    if "verdict" in r:
        text += f"  target {r['target']}: {r['verdict']} ({r['rounds_meeting_target']} rounds)"
    return text


def print_table(results: list[dict[str, object]]) -> None:
    for r in results:
        print(f"\n{r['workload']}  args: {' '.join(r['args']) or '< input'}"  # type: ignore[arg-type]
              f"  ({r['started_utc']}-{r['finished_utc']} UTC, load {r['load_before']}"
              f" -> {r['load_after']})")
        print(f"  invocations {r['invocations']}, allowlist profile == whole: "
              f"{r['allowlist_profile_equals_whole']}, calls == inlined: "
              f"{r['calls_profile_equals_inlined']}")
        variants = r["variants"]
        assert isinstance(variants, dict)
        for name, v in variants.items():
            c, w = v["cpu_s"], v["wall_s"]
            print(f"  {name:18} cpu {c['median']:8.4f} s [IQR {c['q1']}-{c['q3']}]"
                  f"   wall {w['median']:8.4f} s [{w['min']}-{w['max']}]")
        ratios = r["ratios"]
        assert isinstance(ratios, dict)
        print("  ratios by CPU time: median of per-round ratios [IQR, range], ratio of "
              "medians | wall")
        for name, ratio in ratios.items():
            print(f"  {name:30} {_fmt_ratio(ratio)}")
        for key in ("lackey", "instructions", "instructions_x", "runtime"):
            if key in r:
                print(f"  {key}: {r[key]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_work = Path(os.environ.get("CACHEFIT_CACHE_DIR",
                                       Path.home() / ".cache" / "cachefit")) / "bench-trace"
    ap.add_argument("--work", type=Path, default=default_work,
                    help="build and download directory (default %(default)s)")
    ap.add_argument("--reps", type=int, default=15,
                    help="timed rounds; each runs every variant once (default %(default)s)")
    ap.add_argument("--seed", type=int, default=5,
                    help="seed of the in-round shuffle (plus the workload's index)")
    ap.add_argument("--no-lackey", action="store_true", help="skip lackey (slow)")
    ap.add_argument("--only", choices=["ipc", "zlib"], help="one workload")
    ap.add_argument("--zlib-mib", type=int, nargs="+", default=[4],
                    help="zlib input sizes in MiB (callgrind and lackey on the first only)")
    ap.add_argument("--lackey-mib", type=int, default=1,
                    help="zlib input size for the single lackey run (default %(default)s)")
    ap.add_argument("--ipc-rounds", type=int, default=20000, help="pingpong -n")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions with callgrind (deterministic)")
    opts = ap.parse_args()
    if opts.reps < 1:
        sys.exit("--reps must be at least 1")
    for tool in ("clang-19", "clang++-19", "valgrind", "make", "readelf"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    opts.work.mkdir(parents=True, exist_ok=True)
    b = Builds(opts.work)
    b.snapshot_runtime()
    null = null_device(opts.work)
    env = b.env()
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    uptime = uptime_now()
    log(f"build key {b.key} (runtime {b.runtime_sha[:16]}), work {opts.work}, null {null}")
    workloads: list[Workload] = []
    if opts.only in (None, "ipc"):
        log("building ipc")
        bins = build_ipc(b)
        rt = runtime_record(b, "clang++-19")
        # The example's default (clflush before each IPC, as in the paper) and, harder for
        # the tracer, no cache pressure at all. Start-up: one round of one repetition.
        for flush in ("clflush", "none"):
            workloads.append(Workload(
                f"ipc (examples/ipc pingpong-flat, tcb/ipc, -f {flush})", bins,
                ["-n", str(opts.ipc_rounds), "-r", "3", "-f", flush], None,
                ["-n", "1", "-r", "1", "-f", flush], True, rt, null))
    if opts.only in (None, "zlib"):
        log("building zlib")
        bins = build_zlib(b)
        rt = runtime_record(b, "clang-19")
        lackey_in = make_input(opts.work / f"input-{opts.lackey_mib}M.txt",
                               opts.lackey_mib << 20)
        for i, mib in enumerate(opts.zlib_mib):
            data = make_input(opts.work / f"input-{mib}M.txt", mib << 20)
            workloads.append(Workload(
                f"zlib (Debian zlib minigzip, deflate_state/longest_match, {mib} MiB)", bins,
                [], data, [], i == 0, rt, null, lackey_in))
    results: list[dict[str, object]] = []

    def save(complete: bool) -> None:
        if opts.json:
            doc = {"format": FORMAT, "version": VERSION, "complete": complete,
                   "command": sys.argv, "reps": opts.reps, "seed": opts.seed,
                   "null_device": str(null),
                   "started_utc": started,
                   "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
                   "uptime_before": uptime, "uptime_after": uptime_now(), "results": results}
            tmp = opts.json.with_name(opts.json.name + ".tmp")
            tmp.write_text(json.dumps(doc, indent=1) + "\n")
            os.replace(tmp, opts.json)

    # All timed rounds first, then the slow single runs (callgrind, lackey): the ratios
    # come from one stretch of time, and the JSON is saved after every step.
    for i, w in enumerate(workloads):
        results.append(measure_rounds(w, opts.reps, opts.seed + i, env))
        save(False)
    heavy = [(w, res) for w, res in zip(workloads, results, strict=True) if w.heavy]
    if opts.callgrind:
        for w, res in heavy:
            measure_instructions(w, res, env)
            save(False)
    if not opts.no_lackey:
        for w, res in heavy:
            measure_lackey(w, res, env)
            save(False)
    print_table(results)
    save(True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
