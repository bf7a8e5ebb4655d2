"""Issue 31: the static filter's cost and soundness on real programs, in one run.

    nice .venv/bin/python bench/trace/filter_bench.py [--program lua|zlib|both]
        [--work DIR] [--scale S] [--mib M] [--rounds 3] [--json FILE]

For each program, three builds from the same Debian source (`apt-get source lua5.4` /
`zlib`, fetched once into the work directory as bench/profile_scale/run_lua.py and
bench/trace/bench_builds.py do):
  * plain: clang-19 -O2 -g;
  * filter: the profile build with no `instrument` list (issue 31's static filter);
  * all: the same with `instrument = "all"`;
  * (zlib) list: the hand-written list of bench/trace/bench_builds.py,
    `instrument = ["longest_match"]`.
Then, rounds interleaved (plain, filter, all[, list] in each round), the CPU time (user +
sys of the whole process tree, from getrusage of the children) of the plain program and of
`cachefit trace -o prof.json -- PROGRAM` for each profile build; medians of `--rounds`.
Last, whether the filter's profile equals the one of `instrument = "all"`: the text of
`cachefit profile show` and the typed profile's sequences, type by type. It also counts the
functions each unit instruments (the build's notes). Prints JSON; figures go to
bench/trace/RESULTS.md by hand. Builds only in the work directory.

Lua: types lua_State, CallInfo, Table; entries luaV_execute, luaD_poscall,
luaH_getshortstr, luaH_newkey (run_lua.py); workload `src/lua bench.lua S` (SCALE 1 runs
about 0.1 s plain here, SCALE 10 about 1.4 s). Every Lua build gets `--lua-cflags`, by
default `-DSTRCACHE_N=1 -DSTRCACHE_M=1`: Lua's API string cache (luaS_new) is indexed by
the address of the C string, so whether a lookup hits (and calls luaS_newlstr, one more read
of `L->l_G`) depends on the addresses of string literals and stack buffers, which differ
between an instrumented and a less instrumented build; with one slot the work is the same
in every build and the profiles can be compared count for count.
zlib: type internal_state, entry longest_match (bench_builds.py); workload minigzip -6 of
M MiB of generated text (run_zlib.make_input).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "profile_scale"))
sys.path.insert(0, str(REPO / "src"))
from run_lua import ENTRIES as LUA_ENTRIES  # noqa: E402
from run_lua import TYPES as LUA_TYPES  # noqa: E402
from run_lua import fetch_lua  # noqa: E402
from run_zlib import fetch_zlib, make_input  # noqa: E402
from scale_steps import emit  # noqa: E402

from cachefit.model.profile import load  # noqa: E402

PY = str(REPO / ".venv" / "bin" / "python")
CACHEFIT = [PY, "-m", "cachefit.cli.main"]


def sh(cmd: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["/bin/sh", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"failed: {cmd}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    return proc.stderr


def cpu(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + sys) of `cmd` and everything it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd,
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {cmd}\n{proc.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def profile_env(tree: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19",
               CACHEFIT_CONFIG=str(tree / "cachefit.toml"), CACHEFIT_CACHE_DIR=str(cache),
               CACHEFIT_UNITS_DIR=str(tree / "units"),
               PYTHONPATH=str(REPO / "src"), CC=" ".join([*CACHEFIT, "cc"]))
    return env


def notes(units: Path) -> dict[str, int]:
    """Functions instrumented, and in all, over the units of a filtered build: the counts
    the wrapper writes in each unit's sidecar (`static_filter`, CACHEFIT_UNITS_DIR)."""
    chosen = total = n = 0
    for side in sorted(units.glob("*.json")):
        counts = json.loads(side.read_text()).get("static_filter")
        if counts:
            chosen += counts["instrumented"]
            total += counts["functions"]
            n += 1
    return {"units": n, "instrumented": chosen, "functions": total}


def compare(a: Path, b: Path, env: dict[str, str]) -> dict[str, object]:
    shows = [subprocess.run([*CACHEFIT, "profile", "show", str(p)], env=env,
                            capture_output=True, text=True, check=True).stdout
             for p in (a, b)]
    # The first line names the file; the rest must be equal.
    pa, pb = load(a), load(b)
    types = {}
    for name in sorted(set(pa.types) | set(pb.types)):
        ta, tb = pa.types.get(name), pb.types.get(name)
        types[name] = {
            "equal": ta is not None and tb is not None and ta.sequences == tb.sequences,
            "sequences": [len(t.sequences) if t else None for t in (ta, tb)],
            "counted": [sum(s.count for s in t.sequences) if t else None for t in (ta, tb)]}
    return {"show_text_equal": shows[0].splitlines()[1:] == shows[1].splitlines()[1:],
            "invocations": [pa.invocations, pb.invocations], "types": types}


def bench(name: str, src: Path, work: Path, variants: dict[str, str], build: str,
          plain_build: str, run: list[str], types: list[str], entries: list[str],
          rounds: int, extra_files: list[Path], cflags: str = "") -> dict[str, object]:
    trees: dict[str, Path] = {}
    figures: dict[str, object] = {"types": types, "entries": entries,
                                  "workload": " ".join(run)}
    base_env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    for variant in ("plain", *variants):
        tree = work / name / variant
        trees[variant] = tree
        if (tree / ".built").exists():
            continue
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(src, tree)
        for f in extra_files:
            shutil.copy(f, tree / f.name)
        if variant == "plain":
            sh(plain_build, tree, dict(base_env, CC=f"clang-19 {cflags}".strip()))
        else:
            (tree / "cachefit.toml").write_text(
                f"[trace]\ntypes = {json.dumps(types)}\nentry = {json.dumps(entries)}\n"
                + variants[variant])
            env = profile_env(tree, work / "cache")
            env["CC"] = f"{env['CC']} {cflags}".strip()
            err = sh(build, tree, env)
            (tree / "build-notes.txt").write_text(err)
        (tree / ".built").write_text("")
    if "filter" in variants:
        figures["filter_notes"] = notes(trees["filter"] / "units")
    times: dict[str, list[float]] = {v: [] for v in trees}
    for _ in range(rounds):
        for variant, tree in trees.items():
            cmd = run if variant == "plain" else \
                [*CACHEFIT, "trace", "-o", "prof.json", "--", *run]
            times[variant].append(round(cpu(cmd, tree, base_env), 3))
            print(f"{name} {variant}: {times[variant][-1]:.2f} s CPU", file=sys.stderr)
    plain = statistics.median(times["plain"])
    figures["cpu_seconds"] = times
    figures["median_cpu_seconds"] = {v: statistics.median(t) for v, t in times.items()}
    figures["ratio_to_plain"] = {v: round(statistics.median(t) / plain, 2)
                                 for v, t in times.items()}
    figures["filter_vs_all"] = compare(trees["filter"] / "prof.json",
                                       trees["all"] / "prof.json", base_env)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", choices=["lua", "zlib", "both"], default="both")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cachefit-filter-bench"))
    ap.add_argument("--scale", type=float, default=1.0, help="bench.lua's SCALE")
    ap.add_argument("--mib", type=float, default=8.0, help="zlib's input size")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--lua-cflags", default="-DSTRCACHE_N=1 -DSTRCACHE_M=1",
                    help="extra flags of every Lua build (default: the API string cache "
                         "of one slot, so that Lua's work does not depend on the addresses "
                         "of C strings, which differ between the builds; '' for none)")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, object] = {}
    filt = {"filter": 'instrument = "auto"\n', "all": 'instrument = "all"\n'}
    if args.program in ("lua", "both"):
        src = fetch_lua(work)
        project = REPO / "bench" / "projects" / "lua"
        lua_build = "sh build-lua.sh"
        out["lua"] = bench("lua", src, work, filt, lua_build, lua_build,
                           ["src/lua", "bench.lua", f"{args.scale:g}"], LUA_TYPES,
                           LUA_ENTRIES, args.rounds,
                           [project / "build-lua.sh", project / "bench.lua"],
                           args.lua_cflags)
    if args.program in ("zlib", "both"):
        src = fetch_zlib(work)
        data = make_input(work / "input.txt", int(args.mib * 1024 * 1024))
        zbuild = "CFLAGS='-O2 -g' ./configure --static >/dev/null && make -s minigzip"
        out["zlib"] = bench("zlib", src, work,
                            {**filt, "list": 'instrument = ["longest_match"]\n'},
                            zbuild, zbuild, ["sh", "-c", f"./minigzip -6 < {data}"],
                            ["internal_state"], ["longest_match"], args.rounds, [])
    return emit(out, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
