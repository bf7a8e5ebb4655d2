"""Helpers for the `cachefit reorder` tests: write files, compile and run, snapshots."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

C_COMPILERS = [c for c in ("gcc", "clang-19") if shutil.which(c)]
CXX_COMPILERS = [c for c in ("g++", "clang++-19") if shutil.which(c)]


def write(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).write_text(text)


def build_and_run(directory: Path, main: str, compiler: str, std: str,
                  extra: Iterable[str] = ()) -> str:
    """Compile `main` in `directory` with warnings as errors and return its output."""
    exe = directory / f"prog-{compiler}"
    subprocess.run([compiler, std, "-Wall", "-Werror", "-Wno-unused-private-field",
                    *extra, "-o", str(exe), str(directory / main)],
                   check=True, capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def snapshot(paths: Iterable[Path]) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes(), os.stat(p).st_mtime_ns) for p in paths}
