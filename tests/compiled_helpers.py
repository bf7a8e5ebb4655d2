"""Private cachefit caches for the tests, with the compiled helpers shared by the whole run.

Tests that run cachefit in a subprocess give it a cache directory of its own
(CACHEFIT_CACHE_DIR=TMP/.cache), so that the object cache and the scan cache they look at
are theirs alone. The same directory also holds the helpers cachefit compiles on first use:
the tracing runtime (`runtime/`), its inline-check bitcode (`runtime-inline/`), the
native block search (`solver/`) and the check-coalescing pass plugin (`pass-plugin/`).
Those are named by a hash of their sources, compiler and flags and are built under a file
lock (cachefit.cache_files.build_cached), so one copy can
serve every test: `private_cache` links those four subdirectories to one directory of the
test session (shared by the pytest-xdist workers), and the first test that needs a helper
builds it there. tests/trace/test_runtime_cache.py checks the on-demand builds themselves,
in caches of its own.

`build_env` is the environment of a `cachefit build` run in a test with such a cache;
`makefile`, `write_project`, `run_build`, `build_in` and `build_project` make a make-built
project of test programs, run `cachefit build` on it there and read its outputs back (what
a test asserts of those outputs stays in the test).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachefit.model.profile import Profile, load

CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]

SHARED_SUBDIRS = ("runtime", "runtime-inline", "solver", "pass-plugin")
"""The cache subdirectories that hold compiled helpers keyed by their inputs."""

_shared_root: Path | None = None


def set_shared_root(root: Path | None) -> None:
    """Where the session keeps the shared helpers (tests/conftest.py sets it; None: each
    private cache builds its own)."""
    global _shared_root
    _shared_root = root


def private_cache(tmp: Path) -> Path:
    """TMP/.cache, for CACHEFIT_CACHE_DIR: private but for the shared compiled helpers."""
    cache = tmp / ".cache"
    if _shared_root is None:
        return cache
    cache.mkdir(parents=True, exist_ok=True)
    for name in SHARED_SUBDIRS:
        link = cache / name
        if link.is_symlink() or link.exists():
            continue
        target = _shared_root / name
        target.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)
    return cache


def build_env(tmp: Path) -> dict[str, str]:
    """The environment of a `cachefit build` run in a test: this process's, without the
    variables that would put the compiler wrapper in a mode or point it at a project file,
    a plan or a trace directory, and with a private cache (`private_cache`)."""
    env = dict(os.environ)
    for key in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
                "CACHEFIT_TRACE_DIR", "CACHEFIT_LAYOUTS", "CACHEFIT_UNITS_DIR",
                "CACHEFIT_PROFILE_REORDER"):
        env.pop(key, None)
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp))
    return env


def makefile(var: str, units: dict[str, Sequence[str]]) -> str:
    """A Makefile linking `prog` from `units` ({object: [source, its other prerequisites]})
    with $(`var`), each object compiled from its source by $(`var`) at -O0 -g."""
    objects = " ".join(units)
    return f"prog: {objects}\n\t$({var}) -o $@ {objects}\n" + "".join(
        f"{obj}: {' '.join(deps)}\n\t$({var}) -O0 -g -c -o $@ {deps[0]}\n"
        for obj, deps in units.items())


def write_project(tmp: Path, files_from: Path, names: Sequence[str], makefile: str, *,
                  types: Sequence[str], entry: Sequence[str], compiler_key: str,
                  compiler: str) -> Path:
    """TMP/proj with `names` copied from `files_from`, `makefile` as its Makefile, and a
    cachefit.toml tracing `types` from `entry` whose [build] runs `make` with
    `compiler_key` ("cc" or "cxx") set to `compiler`, the workload ./prog, output `out`
    and the retrace on; its path."""
    project = tmp / "proj"
    project.mkdir()
    for name in names:
        shutil.copy(files_from / name, project / name)
    (project / "Makefile").write_text(makefile)
    var = compiler_key.upper()
    (project / "cachefit.toml").write_text(
        f"[trace]\ntypes = {json.dumps(list(types))}\nentry = {json.dumps(list(entry))}\n"
        f'[build]\n{compiler_key} = "{compiler}"\ncommand = \'make -s {var}="${var}"\'\n'
        'clean = "rm -f prog *.o"\nworkload = "./prog"\nbinaries = ["prog"]\n'
        'output = "out"\nretrace = true\n')
    return project


def run_build(project: Path, tmp: Path, *steps: str) -> subprocess.CompletedProcess[str]:
    """`cachefit build` (only `steps` when named) in `project`, with `build_env(tmp)`."""
    args = [a for s in steps for a in ("--step", s)]
    return subprocess.run([*CACHEFIT, "build", *args], cwd=project, env=build_env(tmp),
                          capture_output=True, text=True, check=False)


@dataclass(frozen=True)
class BuiltProject:
    """A project `cachefit build` went through: its directory, the build's stdout, and
    the profile, layout plan records and summary it wrote to `out`."""

    project: Path
    stdout: str
    profile: Profile
    plan: dict[str, Any]
    summary: dict[str, Any]

    @property
    def out(self) -> Path:
        return self.project / "out"


def build_project(tmp: Path, files_from: Path, names: Sequence[str], makefile: str, *,
                  types: Sequence[str], entry: Sequence[str], compiler_key: str = "cc",
                  compiler: str) -> BuiltProject:
    """`write_project`, then the whole `cachefit build`, which must succeed; its outputs."""
    project = write_project(tmp, files_from, names, makefile, types=types, entry=entry,
                            compiler_key=compiler_key, compiler=compiler)
    return build_in(project, tmp)


def build_in(project: Path, tmp: Path) -> BuiltProject:
    """The whole `cachefit build` in `project` (written by `write_project`), which must
    succeed; its outputs."""
    proc = run_build(project, tmp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = project / "out"
    return BuiltProject(project, proc.stdout, load(out / "profile.json"),
                        json.loads((out / "layout-plan.json").read_text())["records"],
                        json.loads((out / "summary.json").read_text()))
