"""The traced run's cost at two or more cachefit commits, on zlib and Lua, in one run.

    nice .venv/bin/python bench/trace/checkout_bench.py --commits A B [C ...]
        [--work DIR] [--mib 16] [--level -6] [--scale 2] [--rounds 3] [--copies 3]
        [--json FILE]

For each commit, an export (`git archive`) is the cachefit used to build the profile
builds (each with a cache directory of its own) and to trace them; the programs come from
the same Debian sources as bench/profile_scale (`apt-get source zlib` / `lua5.4`), fetched
once into the work directory:
  * zlib: `[trace] types = ["internal_state"]`, `entry = ["deflate", "longest_match"]`,
    built by `cachefit build --step profile`; workload `minigzip LEVEL` of MIB MiB of text;
  * Lua 5.4: types lua_State, CallInfo, Table, the four entries of run_lua.py, built by
    bench/projects/lua/build-lua.sh through `cachefit cc` with Lua's string cache of one
    slot (filter_bench.py says why) and a constant hash seed (`luai_makeseed` mixes the
    time and addresses: two traces of one binary differ in Table's sequences without
    it); workload `src/lua bench.lua SCALE`.
Every program runs under `setarch -R` (no address randomization), so that the commits'
profiles can be compared sequence for sequence.
Then, rounds interleaved (plain, then each commit, in each round), two CPU times (user +
sys of the process tree): the traced program alone (the runtime writing its raw trace,
CACHEFIT_TRACE_DIR) and the whole `cachefit trace -o prof.json -- PROGRAM` (program plus
conversion); medians of `--rounds` times `--copies`, and their ratios to the plain
program. Each variant runs from `--copies` copies of its tree, in turn: one binary file
runs at a speed of its own, steadily over rounds (its code's pages stay where they are in
memory), and two copies of one binary differed by up to 15 % on zlib -1
(bench/trace/RESULTS.md, session 26). Last, whether the commits' profiles have the same
invocations and sequences, type by type. Prints JSON; figures go to
bench/trace/RESULTS.md by hand. Builds only in the work directory.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "profile_scale"))
sys.path.insert(0, str(REPO / "bench" / "trace"))
sys.path.insert(0, str(REPO / "src"))
from bench_builds import fetch_zlib, make_input  # noqa: E402
from filter_bench import cpu, sh  # noqa: E402
from run_lua import ENTRIES as LUA_ENTRIES  # noqa: E402
from run_lua import TYPES as LUA_TYPES  # noqa: E402
from run_lua import fetch_lua  # noqa: E402
from scale_steps import checkout_env, emit  # noqa: E402

from cachefit.model.profile import load  # noqa: E402

PY = str(REPO / ".venv" / "bin" / "python")
LUA_PROJECT = REPO / "bench" / "projects" / "lua"
LUA_CFLAGS = "-DSTRCACHE_N=1 -DSTRCACHE_M=1 -Dluai_makeseed=sizeof"
ZLIB_BUILD = "CFLAGS='-O2 -g' ./configure --static >/dev/null && make -s minigzip"


def export(commit: str, work: Path) -> Path:
    """An export of `commit` (with this checkout's native block search, which the trace
    does not use but the package imports), its modules compiled to bytecode as an
    installed package's are: without, every `cachefit trace` compiled them again where
    PYTHONDONTWRITEBYTECODE is set (this machine: 18 ms per command)."""
    out = work / "checkouts" / commit
    if not (out / "src").is_dir():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
        for so in (REPO / "src" / "cachefit" / "layout").glob("_cf_block_search*.so"):
            shutil.copy(so, out / "src" / "cachefit" / "layout" / so.name)
        subprocess.run([PY, "-m", "compileall", "-q", str(out / "src")], check=True)
    return out


def build_zlib(src: Path, tree: Path, env: dict[str, str] | None) -> None:
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(src, tree)
    if env is None:
        sh(ZLIB_BUILD, tree, dict(os.environ, CC="clang-19"))
        return
    (tree / "cachefit.toml").write_text(
        '[trace]\ntypes = ["internal_state"]\nentry = ["deflate", "longest_match"]\n'
        f'[build]\ncc = "clang-19"\ncommand = "{ZLIB_BUILD}"\n'
        'clean = "make distclean >/dev/null 2>&1 || true"\nworkload = "true"\n'
        'binaries = ["minigzip"]\n')
    sh(f"{PY} -m cachefit.cli.main build --step profile", tree, env)


def build_lua(src: Path, tree: Path, env: dict[str, str] | None) -> None:
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(src, tree)
    for name in ("build-lua.sh", "bench.lua"):
        shutil.copy(LUA_PROJECT / name, tree / name)
    if env is None:
        sh("sh build-lua.sh", tree, dict(os.environ, CC=f"clang-19 {LUA_CFLAGS}"))
        return
    (tree / "cachefit.toml").write_text(
        f"[trace]\ntypes = {json.dumps(LUA_TYPES)}\nentry = {json.dumps(LUA_ENTRIES)}\n")
    env = dict(env, CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19",
               CACHEFIT_CONFIG=str(tree / "cachefit.toml"),
               CACHEFIT_UNITS_DIR=str(tree / "units"),
               CC=f"{PY} -m cachefit.cli.main cc {LUA_CFLAGS}")
    sh("sh build-lua.sh", tree, env)


def same_profiles(paths: list[Path]) -> dict[str, object]:
    profiles = [load(p) for p in paths]
    first = profiles[0]
    return {"invocations": [p.invocations for p in profiles],
            "types": {name: all(name in p.types and p.types[name].sequences == t.sequences
                                for p in profiles[1:])
                      for name, t in sorted(first.types.items())}}


def copies_of(tree: Path, k: int) -> list[Path]:
    """`tree` and k - 1 fresh copies of it beside it (new files: their pages are new)."""
    out = [tree]
    for i in range(1, k):
        copy = tree.with_name(f"{tree.name}.copy{i}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(tree, copy, symlinks=True)
        out.append(copy)
    return out


def bench(name: str, src: Path, work: Path, commits: list[str], run: list[str],
          builder, rounds: int, copies: int = 1) -> dict[str, object]:  # type: ignore[no-untyped-def]
    trees = {"plain": work / name / "plain"}
    envs: dict[str, dict[str, str]] = {"plain": dict(os.environ)}
    if not (trees["plain"] / ".built").exists():
        builder(src, trees["plain"], None)
        (trees["plain"] / ".built").write_text("")
    for commit in commits:
        checkout = export(commit, work)
        env = checkout_env(checkout, work / "cache" / commit)
        tree = work / name / commit
        if not (tree / ".built").exists():
            builder(src, tree, env)
            (tree / ".built").write_text("")
        trees[commit], envs[commit] = tree, env
    program: dict[str, list[float]] = {v: [] for v in trees}
    command: dict[str, list[float]] = {v: [] for v in trees if v != "plain"}
    raw = Path(tempfile.mkdtemp(prefix="cf-raw-", dir=work))
    run = ["setarch", "-R", *run]
    runs_in = {variant: copies_of(tree, copies) for variant, tree in trees.items()}
    for _ in range(rounds):
        for i in range(copies):
            for variant in trees:
                tree = runs_in[variant][i]
                env = envs[variant]
                if variant != "plain":
                    env = dict(env, CACHEFIT_TRACE_DIR=str(raw))
                program[variant].append(round(cpu(run, tree, env), 3))
                for f in raw.iterdir():
                    f.unlink()
                if variant != "plain":
                    cmd = [PY, "-m", "cachefit.cli.main", "trace", "-o", "prof.json", "--",
                           *run]
                    command[variant].append(round(cpu(cmd, tree, envs[variant]), 3))
                print(f"{name} {variant} ({tree.name}): program {program[variant][-1]:.2f} s"
                      + (f", trace {command[variant][-1]:.2f} s" if variant in command
                         else ""), file=sys.stderr)
    plain = statistics.median(program["plain"])
    return {"workload": " ".join(run),
            "program_cpu_seconds": program, "trace_cpu_seconds": command,
            "program_ratio": {v: round(statistics.median(t) / plain, 2)
                              for v, t in program.items()},
            "trace_ratio": {v: round(statistics.median(t) / plain, 2)
                            for v, t in command.items()},
            "profiles": same_profiles([trees[c] / "prof.json" for c in commits])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", nargs="+", required=True)
    ap.add_argument("--program", choices=["lua", "zlib", "both"], default="both")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cachefit-checkout-bench"))
    ap.add_argument("--mib", type=float, default=16.0, help="zlib's input size")
    ap.add_argument("--scale", type=float, default=2.0, help="bench.lua's SCALE")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--copies", type=int, default=3,
                    help="run each variant from this many copies of its tree, in turn")
    ap.add_argument("--level", default="-6", help="minigzip's compression level")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, object] = {"commits": args.commits}
    if args.program in ("zlib", "both"):
        data = make_input(work / "input.txt", int(args.mib * 1024 * 1024))
        out["zlib"] = bench("zlib", fetch_zlib(work), work, args.commits,
                            ["sh", "-c", f"./minigzip {args.level} < {data} > /dev/null"],
                            build_zlib, args.rounds, args.copies)
    if args.program in ("lua", "both"):
        out["lua"] = bench("lua", fetch_lua(work), work, args.commits,
                           ["src/lua", "bench.lua", f"{args.scale:g}"], build_lua,
                           args.rounds, args.copies)
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
