"""What run_zlib.py and run_lua.py share: running shell commands, timing them under GNU
time (wall seconds and the peak resident memory of the largest process), the environment
that runs an exported checkout's cachefit, and the `cachefit build` steps each timed.
It fetches, builds and reads nothing of a project itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHEFIT = f"{REPO / '.venv' / 'bin' / 'python'} -m cachefit.cli.main"
STEPS = ("profile", "trace", "layout", "report")


def sh(cmd: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(["/bin/sh", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"failed: {cmd}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def timed(cmd: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in KiB (GNU time: the largest process), and stderr."""
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", "/bin/sh", "-c", cmd], cwd=cwd,
                          env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    lines = proc.stderr.strip().splitlines()
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {cmd}\n{proc.stderr[-3000:]}")
    return seconds, int(lines[-1]), "\n".join(lines[:-1])


def emit(figures: dict[str, object], path: Path | None) -> int:
    """Print a bench's figures as JSON, and write them to `path` when given; exit code 0."""
    text = json.dumps(figures, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n")
    return 0


def checkout_env(checkout: Path | None, cache: Path | None = None) -> dict[str, str]:
    """The environment that runs the cachefit of `checkout` (its src/ and runtime/), or
    this repository's when None; `cache` as its CACHEFIT_CACHE_DIR when given."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout.resolve() / "src")
        env["CACHEFIT_RUNTIME_DIR"] = str(checkout.resolve() / "runtime")
        if cache is not None:
            env["CACHEFIT_CACHE_DIR"] = str(cache)
    return env


def build_steps(tree: Path, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """`cachefit build --step S` in `tree` for each of STEPS, each timed."""
    steps: dict[str, dict[str, float]] = {}
    for step in STEPS:
        seconds, rss, _err = timed(f"{CACHEFIT} build --step {step}", tree, env)
        steps[step] = {"seconds": round(seconds, 2), "peak_rss_mib": round(rss / 1024, 1)}
        print(f"{step}: {seconds:.1f} s, {rss / 1024:.0f} MiB", file=sys.stderr)
    return steps
