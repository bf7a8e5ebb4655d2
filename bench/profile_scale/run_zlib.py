"""Issue 26's targets on zlib: a whole `cachefit build` of Debian zlib's minigzip on a
workload of long `deflate` operations with `longest_match` nested inside, each step timed.

    .venv/bin/python bench/profile_scale/run_zlib.py [--work DIR] [--mib N]
        [--entry deflate --entry longest_match] [--allocators zalloc] [--json FILE]

Steps (each in the work directory, never in the repository):
  1. `apt-get source zlib` (bench/trace/bench_builds.fetch_zlib), a plain build with
     clang-19 -O2 -g, and the workload timed on it: `minigzip -1`, `-6` and `-9` on N MiB
     of deterministic pseudo-text (median of 3 runs): the baseline the ratios divide by;
  2. `cachefit build --step profile`, `--step trace`, `--step layout`, `--step report`,
     each under GNU time for wall time and peak resident memory (of the largest process);
  3. from the profile: its size, invocations per entry, dropped (runaway) invocations,
     the number of sequences and summaries; from the build summary: lines per
     invocation before, after and the bound.
Prints one table and writes the figures as JSON (--json). Figures go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "trace"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_builds import fetch_zlib, make_input  # noqa: E402
from scale_steps import CACHEFIT, build_steps, checkout_env, emit, sh, timed  # noqa: E402

LEVELS = ("-1", "-6", "-9")


def workload(binary: str, data: Path) -> str:
    return " && ".join(f"{binary} {lvl} < {data} > /dev/null" for lvl in LEVELS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/cachefit-scale"))
    ap.add_argument("--mib", type=float, default=1.0)
    ap.add_argument("--entry", action="append", default=None)
    ap.add_argument("--allocators", action="append", default=None,
                    help="[trace] allocators (none: the build must find them itself)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--checkout", type=Path,
                    help="run the cachefit of this checkout (its src/ and runtime/), e.g. a "
                         "clone of an older commit for the before figures")
    args = ap.parse_args()
    env = checkout_env(args.checkout, args.work.resolve() / "cache-checkout")
    entries = args.entry or ["deflate", "longest_match"]
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    src = fetch_zlib(work)
    data = make_input(work / "input.txt", int(args.mib * 1024 * 1024))

    plain = work / "plain"
    if not (plain / "minigzip").exists():
        shutil.rmtree(plain, ignore_errors=True)
        shutil.copytree(src, plain)
        sh("CC=clang-19 CFLAGS='-O2 -g' ./configure --static && make -s minigzip", plain)
    plain_runs = [timed(workload("./minigzip", data), plain)[0] for _ in range(3)]
    plain_s = statistics.median(plain_runs)

    tree = work / "traced"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(src, tree)
    alloc = "" if not args.allocators else f"allocators = {json.dumps(args.allocators)}\n"
    (tree / "cachefit.toml").write_text(
        "[trace]\ntypes = [\"internal_state\"]\n"
        f"entry = {json.dumps(entries)}\n{alloc}\n"
        "[build]\ncc = \"clang-19\"\n"
        "command = \"CFLAGS='-O2 -g' ./configure --static >/dev/null && make -s minigzip\"\n"
        "clean = \"make distclean >/dev/null 2>&1 || true\"\n"
        f"workload = \"{workload('./minigzip', data)}\"\n"
        "binaries = [\"minigzip\"]\n")
    steps = build_steps(tree, env)

    out = tree / "out" / "cachefit"
    profiles = sorted(out.rglob("*profile*.json*"))
    profile_path = next((p for p in profiles if p.is_file()), None)
    figures: dict[str, object] = {"plain_seconds": round(plain_s, 3), "steps": steps,
                                  "entries": entries, "input_mib": args.mib,
                                  "allocators": args.allocators or []}
    if profile_path is not None:
        figures["profile_bytes"] = profile_path.stat().st_size
        figures["profile"] = str(profile_path)
        show = subprocess.run(f"{CACHEFIT} profile show --json {profile_path}", shell=True,
                              env=env, capture_output=True, text=True, check=False)
        prof = None
        if show.returncode == 0:
            prof = json.loads(show.stdout)
        elif profile_path.suffix == ".json":        # a version 1 checkout: JSON as it is
            prof = json.loads(profile_path.read_text())
        if prof is not None:
            t = prof["types"].get("internal_state", {})
            seqs = t.get("sequences", [])
            figures["entry_invocations"] = prof.get("entry_invocations")
            figures["runaway"] = t.get("dropped", {}).get("runaway")
            figures["sequences"] = sum(1 for s in seqs if "hits" not in s)
            figures["summaries"] = sum(1 for s in seqs if "hits" in s)
    summary = out / "summary.md"
    if summary.exists():
        figures["summary_table"] = [line for line in summary.read_text().splitlines()
                                    if line.startswith("|")][:12]
    figures["trace_ratio"] = round(steps["trace"]["seconds"] / plain_s, 1)
    return emit(figures, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
