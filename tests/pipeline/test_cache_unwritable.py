"""Issue 29, case 3: a cache directory that cannot be written (read-only, full, not a
directory) gave tracebacks in optimize mode (objects/compilers), in profile mode
(runtime-inline) and in `cachefit cache --clear`. Compiling goes on without the cache,
with one warning; `cache --clear` is a one-line error with exit 2.

The tests run as root, where permission bits do not stop writes: an unwritable cache is
a CACHEFIT_CACHE_DIR under a regular file (every write fails with ENOTDIR), a full one
an injected ENOSPC."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from wrapper_helpers import (
    BIN,
    CACHEFIT,
    COMPILERS,
    PROJECTS,
    copy_project,
    needs_gcc,
    run,
    wrapper_env,
    write_project,
)

from cachefit.model.layout_plan import load_plan
from cachefit.pipeline.optimize_wrapper import OptimizeBuild

REPO = PROJECTS.parents[2]
SOURCES = ["item.c", "main.c", "list.c"]


def _warnings(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("cachefit: warning:")]


def _unwritable_env(tmp: Path, mode: str, cc: str) -> dict[str, str]:
    (tmp / "afile").write_text("not a directory\n")
    env = wrapper_env(tmp, mode, CACHEFIT_CC=cc)
    env["CACHEFIT_CACHE_DIR"] = str(tmp / "afile" / "cache")
    return env


@pytest.mark.parametrize("mode", ["optimize", "profile"])
@pytest.mark.parametrize("cc", COMPILERS)
def test_build_goes_on_without_the_cache_with_one_warning(cc: str, mode: str,
                                                          tmp_path: Path) -> None:
    work = copy_project("make_c", tmp_path / "p")
    env = _unwritable_env(tmp_path, mode, cc)
    # the runtime archive too is built through the cache (no prebuilt one)
    shutil.copytree(REPO / "runtime", tmp_path / "runtime",
                    ignore=shutil.ignore_patterns("build"))
    env["CACHEFIT_RUNTIME_DIR"] = str(tmp_path / "runtime")
    proc = run([CACHEFIT, "cc", "-O2", *SOURCES, "-o", "prog"], work, env)
    warnings = _warnings(proc.stderr)
    assert len(warnings) == 1, proc.stderr
    assert "afile/cache" in warnings[0] and "cannot be written" in warnings[0]
    assert "Not a directory" in warnings[0]
    assert (work / "prog").is_file()
    if mode == "optimize":       # the plan was applied all the same
        assert run([str(work / "prog")], work, env).returncode == 0


@pytest.mark.parametrize("target", ["afile", "afile/cache"])
def test_clear_of_an_unwritable_cache_is_one_line(tmp_path: Path, target: str) -> None:
    (tmp_path / "afile").write_text("not a directory\n")
    env = wrapper_env(tmp_path, "plain", CACHEFIT_CACHE_DIR=str(tmp_path / target))
    proc = run([CACHEFIT, "cache", "--clear"], tmp_path, env, ok=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"cachefit: error: {tmp_path / target / 'objects'}: cannot "
                               "clear the cache: Not a directory; ")


def _full(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every rename into `root` fails with ENOSPC, as when the disk is full (the temporary
    file was written; the atomic writers must remove it). Returns the paths refused."""
    refused: list[str] = []
    real: Callable[..., None] = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).is_relative_to(root):
            refused.append(str(dst))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return refused


def _left_in(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.name != "lock" and p.name != ".lock")


@needs_gcc
def test_full_cache_in_optimize_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = copy_project("make_c", tmp_path / "p")
    monkeypatch.chdir(work)
    root = tmp_path / "cache"
    refused = _full(root, monkeypatch)
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC="gcc", CACHEFIT_CACHE_DIR=str(root))
    build = OptimizeBuild(load_plan(work / "plan.json"), ["gcc"], "c", env)
    result = build.run(["-O2", "-c", *SOURCES])
    assert result.returncode == 0
    assert len(result.warnings) == 1 and "No space left on device" in result.warnings[0]
    assert refused and all(Path(work / f"{Path(s).stem}.o").is_file() for s in SOURCES)
    assert _left_in(root) == []          # no temporary file, no half of an entry


def test_full_cache_for_built_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cachefit.cache_files import CacheWrites, build_cached
    root = tmp_path / "cache"
    refused = _full(root, monkeypatch)
    warnings: list[str] = []
    writes = CacheWrites(root, warnings, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    made: list[Path] = []

    def make(out: Path) -> None:
        made.append(out)
        out.write_bytes(b"helper")

    first = build_cached(root / "runtime" / "lib.a", make, writes)
    second = build_cached(root / "runtime-inline" / "x.bc", make, writes)
    assert refused == [str(root / "runtime" / "lib.a")]    # not tried again
    assert [first, second] == made and first.read_bytes() == b"helper"
    assert all(tmp_path / "scratch" in p.parents for p in made)
    assert len(warnings) == 1 and "No space left on device" in warnings[0]
    assert _left_in(root) == []
    with pytest.raises(OSError):         # without CacheWrites the error passes through
        build_cached(root / "solver" / "lib.so", make)


ONCE_PROJECT = {
    "t.h": "struct item { long cold[8]; int hot; char pad[40]; int hot2; };\n"
           "int op(struct item *it);\n",
    "op.c": '#include "t.h"\nint op(struct item *it) { return it->hot + it->hot2; }\n',
    "main.c": '#include <stdlib.h>\n#include "t.h"\n'
              "int main(void) { struct item *it = calloc(1, sizeof *it); int s = 0;\n"
              "  for (int i = 0; i < 50; i++) s += op(it);\n  free(it); return s & 1; }\n",
    **{f"{n}.c": f'#include "t.h"\nint f_{n}(struct item *it) {{ return it->hot; }}\n'
       for n in "abcd"},
    "Makefile": "OBJS = main.o op.o a.o b.o c.o d.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
                "%.o: %.c t.h\n\t$(CC) -O1 -g -c -o $@ $<\n",
    "cachefit.toml": '[trace]\ntypes = ["item"]\nentry = ["op"]\n[build]\ncc = "gcc"\n'
                     "command = 'make -s -j4 CC=\"$CC\"'\nclean = \"rm -f prog *.o\"\n"
                     'workload = "./prog"\nbinaries = ["prog"]\n',
}


@needs_gcc
def test_cachefit_build_warns_once_per_build(tmp_path: Path) -> None:
    """Under `cachefit build`, the wrappers of `make -j` (six compiles and links in the
    profile build, six in the optimized one, each its own process that finds the cache
    unwritable) record the warning for the pipeline, which says it once on stderr."""
    work = write_project(ONCE_PROJECT, tmp_path)
    env = _unwritable_env(tmp_path, "plain", "gcc")
    del env["CACHEFIT_MODE"]
    proc = run([CACHEFIT, "build"], work, env)
    warnings = _warnings(proc.stderr)
    assert len(warnings) == 1, proc.stderr
    assert "afile/cache" in warnings[0] and "Not a directory" in warnings[0]
    assert "the build goes on without the cache" in warnings[0]
    for log in (work / "out" / "cachefit").glob("*/build.log"):
        assert "cannot be written" not in log.read_text(), log
    # a plain `make CC=cachefit-cc` (no cachefit build) warns in every process, as before
    plain = run(["make", "-s", "-B", f"CC={BIN / 'cachefit-cc'}"], work,
                {**env, "CACHEFIT_MODE": "optimize",
                 "CACHEFIT_LAYOUTS": str(work / "out" / "cachefit" / "layout-plan.json")})
    assert len(_warnings(plain.stderr)) == 6, plain.stderr      # one per compile
