"""The runtime archive and the inline-check bitcode built on demand into the cache
(cachefit.cache_files.build_cached): built once, reused, no temporary files left,
and a failed build leaves nothing behind."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import REPO, needs_clang, needs_gcc

from cachefit.cache_files import build_cached
from cachefit.errors import UserError
from cachefit.trace.runtime_build import LIB_NAME, runtime_library
from cachefit.trace.sancov_inline import inline_bitcode


@pytest.fixture()
def runtime_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """runtime/ without a prebuilt archive, and a private cache."""
    rt = tmp_path / "runtime"
    shutil.copytree(REPO / "runtime", rt, ignore=shutil.ignore_patterns("build"))
    monkeypatch.setenv("CACHEFIT_RUNTIME_DIR", str(rt))
    monkeypatch.setenv("CACHEFIT_CACHE_DIR", str(tmp_path / "cache"))
    return rt


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@needs_gcc
def test_runtime_archive_built_once(runtime_copy: Path, tmp_path: Path) -> None:
    lib = runtime_library(["gcc"])
    assert lib.name == LIB_NAME and tmp_path / "cache" in lib.parents
    members = subprocess.run(["ar", "t", str(lib)], capture_output=True, text=True,
                             check=True).stdout.split()
    assert sorted(members) == sorted(f"{c.stem}.o" for c in (runtime_copy / "src").glob("*.c"))
    stamp = lib.stat().st_mtime_ns
    assert runtime_library(["gcc"]) == lib and lib.stat().st_mtime_ns == stamp
    assert _files(lib.parent) == [".lock", LIB_NAME]


@needs_clang
def test_inline_bitcode_built_once(runtime_copy: Path) -> None:
    bc = inline_bitcode(["clang-19"], ["-O2"], {})
    assert bc.read_bytes()[:4] == b"BC\xc0\xde"
    stamp = bc.stat().st_mtime_ns
    assert inline_bitcode(["clang-19"], ["-O2"], {}) == bc and bc.stat().st_mtime_ns == stamp
    assert _files(bc.parent) == [".lock", bc.name]


def test_failed_build_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "c" / "thing.bin"

    def fail(out: Path) -> None:
        out.write_bytes(b"half")
        raise UserError("the build failed")

    with pytest.raises(UserError):
        build_cached(target, fail)
    assert _files(target.parent) == [".lock"]
    assert build_cached(target, lambda out: out.write_bytes(b"whole")) == target
    assert target.read_bytes() == b"whole"
    assert build_cached(target, fail) == target     # cached: not built again
