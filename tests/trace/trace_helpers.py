"""Helpers for the tracing tests (imported as `trace_helpers`): build a program through
`cachefit cc`/`c++` in profile mode, trace it with `cachefit trace`, read the profile back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cachefit.model.profile import Access, Profile, TypeProfile, load
from compiled_helpers import private_cache

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]

HAVE_CLANG = shutil.which("clang-19") is not None
HAVE_GCC = shutil.which("gcc") is not None
needs_clang = pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")
needs_gcc = pytest.mark.skipif(not HAVE_GCC, reason="gcc is not installed")


def compiler_params(clang: str, gcc: str) -> list[Any]:
    """`clang` (a clang-19 driver) and `gcc` (a GCC driver) as pytest parameters: the
    first skipped without clang-19, the second without gcc or without clang-19 (a profile
    build with GCC still reads its units with clang-19's libclang)."""
    return [pytest.param(clang, marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
            pytest.param(gcc, marks=pytest.mark.skipif(not HAVE_GCC or not HAVE_CLANG,
                                                       reason=f"no {gcc}"))]


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
                "CACHEFIT_TRACE_DIR"):
        env.pop(key, None)
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp))
    env.update(extra)
    return env


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def write_config(directory: Path, types: Sequence[str], entry: Sequence[str],
                 extra: str = "") -> None:
    def names(xs: Sequence[str]) -> str:
        return "[" + ", ".join(f'"{x}"' for x in xs) + "]"
    (directory / "cachefit.toml").write_text(
        f"[trace]\ntypes = {names(types)}\nentry = {names(entry)}\n{extra}")


def profile_project(tmp: Path, sources: Sequence[str], *, types: Sequence[str],
                    entry: Sequence[str], compiler: str = "clang-19", cxx: bool = False,
                    config_extra: str = "") -> dict[str, str]:
    """Copy tests/trace/programs/SOURCES and obj.h into `tmp` and write its cachefit.toml;
    the environment of a profile build there."""
    for s in [*sources, "obj.h"]:
        shutil.copy(PROGRAMS / s, tmp / s)
    write_config(tmp, types, entry, config_extra)
    key = "CACHEFIT_CXX" if cxx else "CACHEFIT_CC"
    return env_for(tmp, CACHEFIT_MODE="profile", **{key: compiler})


@dataclass
class Built:
    directory: Path
    program: Path
    env: dict[str, str]
    compile_stderr: str

    def trace(self, *args: str, output: str = "prof.json",
              command: Sequence[str] | None = None) -> Profile:
        cmd = [*CACHEFIT, "trace", "-o", output, "--", *(command or [str(self.program), *args])]
        run(cmd, self.directory, self.env)
        return load(self.directory / output)

    def run(self, *args: str) -> str:
        return run([str(self.program), *args], self.directory, self.env).stdout


def build(tmp: Path, sources: Sequence[str], *, types: Sequence[str], entry: Sequence[str],
          compiler: str = "clang-19", cxx: bool = False, flags: Sequence[str] = ("-O0", "-g"),
          config_extra: str = "", name: str = "prog") -> Built:
    """Copy tests/trace/programs/SOURCES into `tmp`, build them in profile mode."""
    env = profile_project(tmp, sources, types=types, entry=entry, compiler=compiler, cxx=cxx,
                          config_extra=config_extra)
    proc = run([*CACHEFIT, "c++" if cxx else "cc", *flags, *sources, "-o", name, "-lpthread"],
               tmp, env)
    trace_env = env_for(tmp)
    return Built(tmp, tmp / name, trace_env, proc.stderr)


Fields = list[tuple[str, int, int]]
Seqs = dict[tuple[tuple[int, int, int, str], ...], int]


def seqs(profile: Profile, type_name: str) -> Seqs:
    """Sequences of a type as {((role, offset, size, mode), ...): count}, the counts of
    equal accesses of several kinds of operation (entry functions) added up."""
    out: Seqs = {}
    for s in profile.types[type_name].sequences:
        key = tuple((a.role, a.offset, a.size, a.mode) for a in s.accesses)
        out[key] = out.get(key, 0) + s.count
    return out


def fields_of(profile_type: TypeProfile) -> Fields:
    """A profile type's fields as (name, offset, size)."""
    return [(f.name, f.offset, f.size) for f in profile_type.fields]


def assert_definitions(profile: Profile, expected: dict[str, tuple[int, Fields, Seqs]]) -> None:
    """`profile` has exactly the types of `expected` ({key: (size, fields_of, seqs)}), each
    with that size, those fields and sequences, and no access outside its objects."""
    assert sorted(profile.types) == sorted(expected)
    for key, (size, fields, sequences) in expected.items():
        assert (profile.types[key].size, fields_of(profile.types[key])) == (size, fields)
        assert seqs(profile, key) == sequences
        assert profile.types[key].outside_objects == 0


def acc(*quads: tuple[int, int, int, str]) -> tuple[Access, ...]:
    return tuple(Access(*q) for q in quads)  # type: ignore[arg-type]


def calls_in(program: Path, function: str) -> str:
    """The call instructions in `function` of an ELF file (objdump), one per line."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(program)],
                         capture_output=True, text=True, check=True).stdout
    start = out.index(f"<{function}>:")
    end = out.find("\n\n", start)
    body = out[start:end if end >= 0 else len(out)]
    return "\n".join(line for line in body.splitlines() if "call" in line)


IPC = REPO / "examples" / "ipc"
needs_ipc = pytest.mark.skipif(not (IPC / "Makefile").is_file(),
                               reason="examples/ipc is not there")
PINGPONG_ARGS = ("-n", "300", "-r", "2")


def build_pingpong(tmp: Path) -> Path:
    """examples/ipc's pingpong-flat, built by its Makefile with CXX="cachefit c++" in profile
    mode (clang++-19) below `tmp`, tracing `tcb` from `ipc`; the program's path."""
    (tmp / "cachefit.toml").write_text('[trace]\ntypes = ["tcb"]\nentry = ["ipc"]\n')
    env = env_for(tmp, CACHEFIT_MODE="profile", CACHEFIT_CXX="clang++-19",
                  CACHEFIT_CONFIG=str(tmp / "cachefit.toml"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    build = tmp / "build"
    run(["make", "-s", "-C", str(IPC), "CXX=cachefit c++", f"BUILD={build}",
         str(build / "pingpong-flat")], tmp, env)
    return build / "pingpong-flat"


def trace_pingpong(tmp: Path, prog: Path, output: str = "ipc.json") -> Path:
    """`cachefit trace` of `prog` with PINGPONG_ARGS, run in `tmp`; the profile's path."""
    run([*CACHEFIT, "trace", "-o", output, "--", str(prog), *PINGPONG_ARGS], tmp, env_for(tmp))
    return tmp / output
