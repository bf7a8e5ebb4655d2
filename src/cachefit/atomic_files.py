"""Files written whole or not at all: a temporary file in the target's directory, renamed.

`write_bytes_atomic` and `copy_atomic` are for files cachefit owns (caches, plans, saved
units): they create missing parent directories and let `OSError` through. `save_output`
is for a file the user named (a profile, a report): it creates no directories and turns
`OSError` into a `UserError` naming the file. At any moment the target holds either its
old contents or the new ones; the temporary file is removed when anything fails.

This module decides no paths and prints nothing. It neither syncs to disk nor keeps an
existing file's permission bits: `cachefit.rewrite.edits.write_atomic` does both, for
sources the user edits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cachefit.errors import UserError

__all__ = ["copy_atomic", "save_output", "write_bytes_atomic"]


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary file beside `target` for the block to fill; renamed to `target` when the
    block succeeds, removed when anything fails."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path`, creating its directory; `OSError` passes through."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _replacing(target) as tmp:
        tmp.write_bytes(data)


def copy_atomic(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """Copy the contents of `src` to `dest`, creating its directory; `OSError` passes through."""
    target = Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _replacing(target) as tmp:
        shutil.copyfile(src, tmp)


def save_output(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to the output file `path`; a failure is a `UserError` naming it."""
    target = Path(path)
    started = False
    try:
        with _replacing(target) as tmp:
            started = True
            tmp.write_bytes(data)
    except OSError as exc:
        todo = "" if started else "check that the directory exists and is writable"
        raise UserError(f"cannot write {target}: {exc.strerror}", todo) from exc
