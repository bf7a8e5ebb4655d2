"""Issue 26's figures on a second long-operation program: Lua 5.4.4 (Debian source
lua5.4), whose interpreter loop `luaV_execute` runs a whole script as one operation with
nested entries (`luaD_poscall`, `luaH_getshortstr`, `luaH_newkey`) inside it.

    .venv/bin/python bench/profile_scale/run_lua.py [--work DIR] [--scale N]
        [--entry luaV_execute --entry ...] [--allocators luaC_newobj ...] [--json FILE]
        [--checkout DIR]

Steps (each in the work directory, never in the repository):
  1. `apt-get source lua5.4` (once), a plain build with clang-19 -O2 -g
     (bench/projects/lua/build-lua.sh), and the workload timed on it:
     `src/lua bench.lua N` (bench/projects/lua/bench.lua, median of 3 runs): the baseline
     the trace ratio divides by;
  2. `cachefit build --step profile`, `--step trace`, `--step layout`, `--step report`,
     each under GNU time for wall time and peak resident memory (of the largest process);
  3. from the profile: its size, invocations per kind, dropped (runaway) invocations and
     the memory guards per type, the numbers of sequences and summaries; from the build
     summary: lines per invocation before, after and
     the bound, per type, and per kind from the report (report/report.txt).
Prints the figures as JSON (--json writes them too). Figures go to RESULTS.md by hand.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_steps import CACHEFIT, build_steps, checkout_env, emit, sh, timed  # noqa: E402

PROJECT = REPO / "bench" / "projects" / "lua"
TYPES = ["lua_State", "CallInfo", "Table"]
ENTRIES = ["luaV_execute", "luaD_poscall", "luaH_getshortstr", "luaH_newkey"]


def fetch_lua(work: Path) -> Path:
    """The Debian source tree of lua5.4, unpacked once into WORK/src."""
    src = work / "src"
    if not (src / "src" / "lvm.c").exists():
        dl = work / "download"
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir(parents=True)
        sh("apt-get source -qq lua5.4", dl)
        tree = next(p for p in dl.iterdir() if p.is_dir() and p.name.startswith("lua5.4"))
        shutil.rmtree(src, ignore_errors=True)
        tree.rename(src)
    return src


def copy_tree(src: Path, dst: Path) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    for name in ("build-lua.sh", "bench.lua"):
        shutil.copy(PROJECT / name, dst / name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/cachefit-scale-lua"))
    ap.add_argument("--scale", type=float, default=8.0, help="bench.lua's SCALE argument")
    ap.add_argument("--entry", action="append", default=None)
    ap.add_argument("--allocators", action="append", default=None,
                    help="[trace] allocators (none: the build must find them itself)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--checkout", type=Path,
                    help="run the cachefit of this checkout (its src/ and runtime/), e.g. an "
                         "export of HEAD while the working tree is being edited")
    args = ap.parse_args()
    env = checkout_env(args.checkout)
    entries = args.entry or ENTRIES
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    src = fetch_lua(work)
    run = f"src/lua bench.lua {args.scale:g}"

    plain = work / "plain"
    if not (plain / "src" / "lua").exists():
        copy_tree(src, plain)
        sh("CC=clang-19 sh build-lua.sh", plain)
    shutil.copy(PROJECT / "bench.lua", plain / "bench.lua")
    plain_runs = [timed(f"{run} > /dev/null", plain)[0] for _ in range(3)]
    plain_s = statistics.median(plain_runs)
    plain_rss = timed(f"{run} > /dev/null", plain)[1]

    tree = work / "traced"
    copy_tree(src, tree)
    alloc = "" if not args.allocators else f"allocators = {json.dumps(args.allocators)}\n"
    (tree / "cachefit.toml").write_text(
        f"[trace]\ntypes = {json.dumps(TYPES)}\nentry = {json.dumps(entries)}\n{alloc}\n"
        "[build]\ncc = \"clang-19\"\ncommand = \"sh build-lua.sh\"\n"
        "clean = \"rm -f src/*.o src/lua\"\n"
        f"workload = \"{run} > /dev/null\"\nbinaries = [\"src/lua\"]\n")
    steps = build_steps(tree, env)

    out = tree / "out" / "cachefit"
    figures: dict[str, object] = {
        "plain_seconds": round(plain_s, 3), "plain_runs": [round(s, 3) for s in plain_runs],
        "plain_peak_rss_mib": round(plain_rss / 1024, 1), "steps": steps,
        "entries": entries, "scale": args.scale, "allocators": args.allocators or []}
    trace_step = json.loads((out / "steps" / "trace.json").read_text()) \
        if (out / "steps" / "trace.json").exists() else {}
    figures["trace_step_record"] = trace_step
    profile_path = out / "profile.json"
    if profile_path.is_file():
        figures["profile_bytes"] = profile_path.stat().st_size
        show = subprocess.run(f"{CACHEFIT} profile show --json {profile_path}", shell=True,
                              env=env, capture_output=True, text=True, check=False)
        if show.returncode == 0:
            prof = json.loads(show.stdout)
            figures["entry_invocations"] = prof.get("entry_invocations")
            figures["invocations"] = prof.get("invocations")
            per_type = {}
            for name, t in prof["types"].items():
                seqs = t.get("sequences", [])
                per_type[name] = {
                    "dropped": t.get("dropped"),
                    "sequences": sum(1 for s in seqs if "hits" not in s),
                    "summaries": sum(1 for s in seqs if "hits" in s),
                    "counted": sum(s.get("count", 0) for s in seqs),
                    "alignment": t.get("alignment"),
                    "kinds": sorted({str(s.get("entry")) for s in seqs})}
            figures["types"] = per_type
    summary = out / "summary.json"
    if summary.exists():
        figures["summary"] = json.loads(summary.read_text()).get("types")
    kinds: dict[str, dict[str, list[float]]] = {}      # type -> kind -> before, after, bound
    report = out / "report" / "report.txt"
    current = None
    for line in (report.read_text().splitlines() if report.exists() else []):
        if line.startswith("type "):
            current = line.split()[1].rstrip(":")
        elif current and line.startswith("  lines per invocation of"):
            kinds[current] = {}
        elif current in kinds and line.strip() and len(line.split()) == 5 and \
                line.startswith("  ") and not line.startswith("   "):
            name, _count, *vals = line.split()
            try:
                kinds[current][name] = [float(v) for v in vals]
            except ValueError:
                current = None
        elif current in kinds and not line.strip():
            current = None
    figures["kinds"] = kinds
    figures["trace_ratio"] = round(steps["trace"]["seconds"] / plain_s, 1)
    return emit(figures, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
