"""Helpers for the `cachefit reorder` tests: write files, compile and run, snapshots."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cachefit.reorder.analysis import Analysis, analyse, units_for

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


def refused_order(cachefit: Callable[..., tuple[int, str, str]], tmp_path: Path,
                  *args: Any) -> str:
    """Run `cachefit reorder ARGS -o bad.h`, which must be refused: exit 2, nothing on
    stdout, one line on stderr (returned), and no output file."""
    code, out, err = cachefit("reorder", *args[:-2], "-o", tmp_path / "bad.h", *args[-2:])
    assert code == 2 and not out and len(err.splitlines()) == 1, err
    assert not (tmp_path / "bad.h").exists()
    return err


def analyse_rec_and_use(tmp_path: Path, name: str, rec: str, use: str) -> Analysis:
    """Write `rec.h` and `use.c` into `tmp_path` and analyse record `name` over both
    (gnu11), as `cachefit reorder` does before it rewrites."""
    write(tmp_path, {"rec.h": rec, "use.c": use})
    return analyse(name, units_for([str(tmp_path / "rec.h"), str(tmp_path / "use.c")], None,
                                   ["-std=gnu11"]))


def reorder_in_place(cachefit: Callable[..., tuple[int, str, str]], tmp_path: Path,
                     name: str, order: str) -> None:
    """`cachefit reorder NAME rec.h use.c --order ORDER --in-place -- -std=gnu11`, which
    must succeed."""
    code, _, err = cachefit("reorder", name, tmp_path / "rec.h", tmp_path / "use.c",
                            "--order", order, "--in-place", "--", "-std=gnu11")
    assert code == 0, err


def reorder_and_run(cachefit: Callable[..., tuple[int, str, str]], tmp_path: Path,
                    name: str, order: str, compiler: str) -> list[str]:
    """`reorder_in_place` of NAME with ORDER, then use.c built with `compiler` (gnu11) and
    run: the words it prints."""
    reorder_in_place(cachefit, tmp_path, name, order)
    return build_and_run(tmp_path, "use.c", compiler, "-std=gnu11").split()
