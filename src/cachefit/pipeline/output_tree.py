"""Where `cachefit build` keeps every intermediate file, and the per-step stamps.

One `OutputTree` names every path under the output directory (default `out/cachefit`, see
docs/cachefit-toml.md); `write_stamp` / `read_stamp` record what a finished step produced
(its time and figures) in `steps/<step>.json`, so a later `--step` run can check that the
files it needs are there. This module only names paths and reads/writes small JSON files
atomically; it runs nothing.

`retrace` (issue 26) is a side step after `layout`: it only measures the plan, so it
invalidates nothing but its own stamp, and a full run includes it only with `[build]
retrace = true` (cachefit.pipeline.pipeline).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachefit.edits import write_atomic
from cachefit.errors import UserError

STEPS: tuple[str, ...] = ("profile", "trace", "layout", "retrace", "optimize", "report")
# Steps a full `cachefit build` runs when [build] retrace is not set.
DEFAULT_STEPS: tuple[str, ...] = tuple(s for s in STEPS if s != "retrace")


@dataclass(frozen=True)
class OutputTree:
    """The output directory's layout."""

    root: Path

    @property
    def profile_dir(self) -> Path:
        """profile build: build.log, bin/ (kept binaries), flatten-plan.json"""
        return self.root / "profile"

    @property
    def flatten_plan(self) -> Path:
        return self.profile_dir / "flatten-plan.json"

    @property
    def optimize_dir(self) -> Path:
        """optimized build: build.log, bin/ (kept binaries)"""
        return self.root / "optimize"

    @property
    def retrace_dir(self) -> Path:
        """retrace step (issue 26): build.log, bin/, profile.json and workload.log of the
        profile build with the plan applied (reordered), traced"""
        return self.root / "retrace"

    @property
    def retrace_profile(self) -> Path:
        return self.retrace_dir / "profile.json"

    @property
    def retrace_log(self) -> Path:
        return self.retrace_dir / "workload.log"

    def units_dir(self, step: str) -> Path:
        """transformed units written by the wrapper (CACHEFIT_UNITS_DIR)"""
        return self.root / "units" / step

    def wrappers_dir(self, step: str) -> Path:
        return self.root / "wrappers" / step

    @property
    def profile(self) -> Path:
        return self.root / "profile.json"

    @property
    def trace_log(self) -> Path:
        return self.root / "trace" / "workload.log"

    @property
    def pgo_dir(self) -> Path:
        return self.root / "pgo"

    @property
    def layout_dir(self) -> Path:
        """one `<type>.json` per target type: the reorder outcome"""
        return self.root / "layout"

    @property
    def plan(self) -> Path:
        return self.root / "layout-plan.json"

    @property
    def report_dir(self) -> Path:
        return self.root / "report"

    @property
    def summary_md(self) -> Path:
        return self.root / "summary.md"

    @property
    def summary_json(self) -> Path:
        return self.root / "summary.json"

    def stamp(self, step: str) -> Path:
        return self.root / "steps" / f"{step}.json"

    @property
    def cache_notice(self) -> Path:
        """Where a run's compiler wrappers record that the cache cannot be written
        (cachefit.cache_files.NOTICE_ENV), for the pipeline to say once."""
        return self.root / "steps" / "cache-unwritable.txt"

    def products(self, step: str) -> list[Path]:
        """What `step` writes for the user to look at (docs/cachefit-toml.md, "Steps and
        files"); the caller keeps those that exist."""
        return {
            "profile": [self.profile_dir / "build.log", self.profile_dir / "bin",
                        self.units_dir("profile")],
            "trace": [self.profile, self.trace_log, self.pgo_dir],
            "layout": [self.plan, self.layout_dir],
            "retrace": [self.retrace_dir / "build.log", self.retrace_dir / "bin",
                        self.units_dir("retrace"), self.retrace_profile, self.retrace_log],
            "optimize": [self.optimize_dir / "build.log", self.optimize_dir / "bin"],
            "report": [self.report_dir],
        }[step]


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temporary file + rename), creating the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(str(path), (json.dumps(data, indent=2) + "\n").encode())


def write_stamp(tree: OutputTree, step: str, data: dict[str, Any]) -> None:
    write_json(tree.stamp(step), {"step": step, **data})


def read_stamp(tree: OutputTree, step: str) -> dict[str, Any] | None:
    try:
        data = json.loads(tree.stamp(step).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def require(tree: OutputTree, step: str, needed: str, *paths: Path) -> None:
    """Raise a UserError when an earlier step's stamp or one of `paths` is missing."""
    missing = [p for p in paths if not p.exists()]
    if read_stamp(tree, needed) is None or missing:
        what = ", ".join(str(p) for p in missing) or str(tree.stamp(needed))
        raise UserError(f"{what}: missing; --step {step} needs the output of the "
                        f"{needed} step in {tree.root}",
                        f"run `cachefit build --step {needed}` (or the whole `cachefit build`)"
                        " first")


def fresh_dir(path: Path) -> Path:
    """Empty `path` (it belongs to the output tree) and return it."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def invalidate_after(tree: OutputTree, step: str) -> None:
    """Forget the stamps of `step` and every later step (their inputs are changing); the
    retrace step changes no other step's input and forgets only its own."""
    if step == "retrace":
        tree.stamp(step).unlink(missing_ok=True)
        return
    for later in STEPS[STEPS.index(step):]:
        tree.stamp(later).unlink(missing_ok=True)
