"""Helpers for the compiler-wrapper tests (imported as `wrapper_helpers`): copy a test
project, run `cachefit cc`/`c++` or a build tool with a wrapper environment, read the
object cache's counters."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from compiled_helpers import private_cache

PROJECTS = Path(__file__).resolve().parent / "projects"
BIN = Path(sys.executable).parent
CACHEFIT = str(BIN / "cachefit")

HAVE_GCC = shutil.which("gcc") is not None
HAVE_CLANG = shutil.which("clang-19") is not None
needs_gcc = pytest.mark.skipif(not HAVE_GCC, reason="gcc is not installed")
needs_clang = pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")
COMPILERS = [pytest.param("gcc", marks=needs_gcc), pytest.param("clang-19", marks=needs_clang)]

# projects/make_c: its layout plan, and struct item's fields as item.h declares them.
MAKE_C_PLAN = json.loads((PROJECTS / "make_c" / "plan.json").read_text())
MAKE_C_DECLARED = ["tag", "weight", "count", "flag", "id", "next"]


def copy_project(name: str, dest: Path) -> Path:
    shutil.copytree(PROJECTS / name, dest)
    return dest


def wrapper_env(tmp: Path, mode: str, **extra: str) -> dict[str, str]:
    """The environment of a wrapper build: mode, a private cache, no inherited settings."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("CACHEFIT_"):
            del env[key]
    env["CACHEFIT_MODE"] = mode
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp))
    env.update(extra)
    return env


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str], *, ok: bool = True,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, input=stdin)
    if ok and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def cache_stats(env: dict[str, str], cwd: Path) -> dict[str, int]:
    out = run([CACHEFIT, "cache", "--stats", "--json"], cwd, env).stdout
    data: dict[str, int] = json.loads(out)
    return data


def layout(output: str) -> dict[str, int]:
    """`name offset` lines printed by a test program's --layout."""
    out = {}
    for line in output.splitlines():
        name, value = line.split()
        out[name] = int(value)
    return out


def order_by_offset(offsets: dict[str, int]) -> list[str]:
    return [n for n, _ in sorted((kv for kv in offsets.items() if kv[0] != "sizeof"),
                                 key=lambda kv: kv[1])]


def write_project(files: dict[str, str], dest: Path) -> Path:
    """A project made of `files` (name -> text) in `dest`/p; its directory."""
    project = dest / "p"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    return project


def cachefit_in(args: Sequence[str], cwd: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """`cachefit ARGS` in `cwd` without the caller's CACHEFIT_* settings, with a private cache
    below `tmp`; not checked."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp))
    return subprocess.run([sys.executable, "-m", "cachefit.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
