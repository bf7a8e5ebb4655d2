"""How `cachefit build` runs the project's own build: compiler wrappers, environment, tailoring.

`write_wrappers` writes two small executable scripts, `cc` and `c++`, into a directory of
the output tree; each runs `cachefit cc` / `cachefit c++` with this Python interpreter and
the tailoring flags of the step in front of the build's own arguments (a single executable
path, so make, ./configure and CMake all accept it as CC/CXX). `build_environment` sets
CC, CXX, CACHEFIT_MODE, CACHEFIT_CONFIG, CACHEFIT_UNITS_DIR and CACHEFIT_LAYOUTS for one
step. `tailoring_flags` turns `march_native`, `lto` and `pgo` into compiler flags for the
real compiler's family (clang or gcc, asked with `--version`).

What it must not do: decide layouts, touch the project's sources, or run the build itself
(cachefit.pipeline.pipeline does); flags are added only through the wrapper scripts.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from cachefit.edits import write_atomic
from cachefit.errors import ToolMissing
from cachefit.model.project_config import real_compiler
from cachefit.pipeline.pipeline_config import PipelineConfig

Family = Literal["clang", "gcc"]


@dataclass(frozen=True)
class Wrappers:
    """The two wrapper scripts of one step."""

    cc: Path
    cxx: Path


@cache
def _version_text(compiler: str) -> str:
    try:
        proc = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                              check=False, timeout=60)
    except FileNotFoundError as exc:
        raise ToolMissing(f"compiler {compiler} not found",
                          "install it or set [build] cxx / CACHEFIT_CXX") from exc
    return proc.stdout


def compiler_family(config: PipelineConfig) -> Family:
    """clang or gcc: the family of the real C++ compiler the wrapper will run."""
    cmd = real_compiler(config.project, "c++")
    # a launcher such as `ccache clang++-19`: the compiler is the last word
    return "clang" if "clang" in _version_text(cmd[-1]).lower() else "gcc"


def llvm_profdata(config: PipelineConfig) -> str:
    """llvm-profdata matching the clang in use (llvm-profdata-19 for clang++-19)."""
    compiler = Path(real_compiler(config.project, "c++")[-1]).name
    suffix = compiler.rsplit("-", 1)[1] if "-" in compiler else ""
    for name in ([f"llvm-profdata-{suffix}"] if suffix.isdigit() else []) + ["llvm-profdata"]:
        found = shutil.which(name)
        if found:
            return found
    raise ToolMissing("llvm-profdata not found (needed for [build] pgo with clang)",
                      "install llvm-19 (apt-get install llvm-19)")


def tailoring_flags(config: PipelineConfig, step: Literal["profile", "optimize"],
                    pgo_dir: Path) -> list[str]:
    """Flags the wrapper adds in front of every compile and link of `step`.

    The profile build only gets PGO instrumentation (its code is traced, not measured); the
    optimized build gets -march=native, LTO and the PGO profile of the same workload run.
    """
    family = compiler_family(config) if (config.lto or config.pgo) else "gcc"
    flags: list[str] = []
    if step == "profile":
        if config.pgo:
            flags += (["-fprofile-instr-generate"] if family == "clang"
                      else [f"-fprofile-generate={pgo_dir / 'gcda'}",
                            "-fprofile-update=atomic"])
        return flags
    if config.march_native:
        flags.append("-march=native")
    if config.lto:
        flags.append("-flto=thin" if family == "clang" else "-flto=auto")
    if config.pgo:
        if family == "clang":
            # The profile build's code differs where cachefit edited it (entry functions):
            # those functions get no profile data; the warnings would say so for each.
            flags += [f"-fprofile-instr-use={pgo_dir / 'merged.profdata'}",
                      "-Wno-profile-instr-out-of-date", "-Wno-profile-instr-unprofiled",
                      "-Wno-backend-plugin", "-Qunused-arguments"]
        else:
            flags += [f"-fprofile-use={pgo_dir / 'gcda'}", "-fprofile-partial-training",
                      "-Wno-missing-profile", "-Wno-coverage-mismatch"]
    return flags


def write_wrappers(directory: Path, flags: Sequence[str]) -> Wrappers:
    """Write `cc` and `c++` scripts into `directory` that run cachefit's wrapper with `flags`."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in ("cc", "c++"):
        script = directory / name
        text = ("#!/bin/sh\n# written by cachefit build: cachefit's compiler wrapper\n"
                f"exec {shlex.quote(sys.executable)} -m cachefit.cli.main {name} "
                f"{shlex.join(flags)}{' ' if flags else ''}\"$@\"\n")
        write_atomic(str(script), text.encode())
        script.chmod(0o755)
        out[name] = script
    return Wrappers(cc=out["cc"], cxx=out["c++"])


def build_environment(config: PipelineConfig, mode: Literal["profile", "optimize"],
                      wrappers: Wrappers, units_dir: Path, plan: Path | None,
                      base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of one build step (the caller's, plus cachefit's variables)."""
    env = dict(os.environ if base is None else base)
    env.update({
        "CC": str(wrappers.cc), "CXX": str(wrappers.cxx),
        "CACHEFIT_MODE": mode, "CACHEFIT_CONFIG": str(config.config_path),
        "CACHEFIT_UNITS_DIR": str(units_dir),
    })
    if plan is not None:
        env["CACHEFIT_LAYOUTS"] = str(plan)
    else:
        env.pop("CACHEFIT_LAYOUTS", None)
    return env
