"""Time the conversion of raw traces into a profile (issue 26): this checkout's
cachefit.trace.raw_trace against the one of a base commit, on the same raw files, and check
that both give the same output.

    .venv/bin/python bench/profile_scale/bench_raw_parse.py RAW... [--base REV] [--runs N]

RAW are raw trace files or directories of them (`CACHEFIT_TRACE_DIR=DIR program`). The
base's raw_trace.py is read with `git show REV:...` and imported beside this checkout's
(the rest of the package is this checkout's; --git names the repository when this
checkout is an export). Times, median and min of N runs taken in
turns: `parse_raw` of every file, `profile_from_raw`, and the conversion `cachefit trace`
does after the command (`profile_from_raw` plus `profile.dumps`, what `save` writes).
Checks: every RawTrace equal, and the profile text byte-identical (date set alike). It
writes nothing."""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from cachefit.model.profile import Profile, dumps  # noqa: E402
from cachefit.trace import raw_trace  # noqa: E402

RAW_TRACE = "src/cachefit/trace/raw_trace.py"


def base_module(rev: str, git: Path) -> ModuleType:
    """raw_trace.py as it is at `rev` of the repository `git`, imported as a module of its
    own."""
    source = subprocess.run(["git", "show", f"{rev}:{RAW_TRACE}"], cwd=git, check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("raw_trace_base", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, f"{rev}:{RAW_TRACE}", "exec"), module.__dict__)  # noqa: S102
    return module


def raw_fields(raw: Any) -> dict[str, Any]:
    """A RawTrace's fields, its sequences as tuples (the two modules' classes differ)."""
    out = dict(vars(raw))
    out["sequences"] = [(s.type_id, s.entry, s.count, s.accesses, s.hits)
                        for s in raw.sequences]
    return out


def profile_text(profile: Profile) -> str:
    profile.metadata["date"] = "2000-01-01T00:00:00Z"
    return dumps(profile)


def measure(runs: int, cases: dict[str, Callable[[], Any]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            start = time.process_time()
            fn()
            times[name].append(time.process_time() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", nargs="+")
    ap.add_argument("--base", default="89dcd4b", help="commit to compare with")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--git", type=Path, default=REPO,
                    help="repository holding --base (default: this checkout)")
    args = ap.parse_args()
    files = raw_trace.collect_raw_files(args.raw)
    old = base_module(args.base, args.git)
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} raw file(s), {size / 2**20:.1f} MiB; base {args.base}")

    for f in files:
        if raw_fields(old.parse_raw(f)) != raw_fields(raw_trace.parse_raw(f)):
            sys.exit(f"{f}: RawTrace differs")
    if profile_text(old.profile_from_raw(files)) != profile_text(
            raw_trace.profile_from_raw(files)):
        sys.exit("profile text differs")
    print("outputs identical: RawTrace of every file, profile text")

    cases: dict[str, Callable[[], Any]] = {}
    for label, mod in (("base", old), ("this", raw_trace)):
        cases[f"parse_raw {label}"] = lambda mod=mod: [mod.parse_raw(f) for f in files]
        cases[f"profile_from_raw {label}"] = lambda mod=mod: mod.profile_from_raw(files)
        cases[f"conversion {label}"] = lambda mod=mod: dumps(mod.profile_from_raw(files))
    times = measure(args.runs, cases)
    for step in ("parse_raw", "profile_from_raw", "conversion"):
        base, this = times[f"{step} base"], times[f"{step} this"]
        print(f"{step:17s} base {statistics.median(base):.3f} s (min {min(base):.3f})  "
              f"this {statistics.median(this):.3f} s (min {min(this):.3f})  "
              f"{statistics.median(base) / statistics.median(this):.2f}x")


if __name__ == "__main__":
    main()
