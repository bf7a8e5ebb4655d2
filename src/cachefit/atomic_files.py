"""Files written whole or not at all: a temporary file in the target's directory, renamed.

`write_bytes_atomic` and `copy_atomic` are for files cachefit owns (caches, plans, saved
units): they create missing parent directories and let `OSError` through. `save_output`
is for a file the user named (a profile, a report): it creates no directories and turns
`OSError` into a `UserError` naming the file; `check_output` raises that error before a
long run rather than after it, and `make_output_dir` prepares a directory the user named.
At any moment the target holds either its old contents or the new ones; the temporary file
is removed when anything fails, an interrupt (Ctrl-C) included.
A target that exists and is not a regular file (`/dev/null`, a FIFO, `/dev/stdout`) is
written in place: renaming over it would replace the device with a file (as root, for
every program on the machine).

A new file gets the permission bits `open()` would give it, 0666 less the umask
(`new_file_mode`; `tempfile.mkstemp` alone gives 0600), also when it replaces an existing
one. This module decides no paths and prints nothing. It neither syncs to disk nor keeps an
existing file's permission bits: `cachefit.edits.write_atomic` does both, for
sources the user edits.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cachefit.errors import Location, UserError
from cachefit.interrupts import held

__all__ = ["check_output", "copy_atomic", "is_special_file", "make_output_dir", "new_file_mode",
           "save_output", "write_bytes_atomic"]


def is_special_file(path: str | os.PathLike[str]) -> bool:
    """True when `path` exists (after symbolic links) and is not a regular file or a
    directory: a device, a FIFO or a socket, which must be written in place."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def new_file_mode() -> int:
    """The permission bits of a new file: 0666 less the process's umask, as `open()` and a
    shell redirection give (the umask can only be read by setting it)."""
    umask = os.umask(0o077)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary file beside `target` for the block to fill; renamed to `target` when the
    block succeeds, removed when anything fails. A special file is filled in place."""
    if is_special_file(target):
        yield target
        return
    tmp = ""
    try:
        with held():        # an interrupt waits until the name is known, to remove it
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                       dir=target.parent)
        try:
            os.fchmod(fd, new_file_mode())
        finally:
            os.close(fd)
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        if tmp:
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
    with _replacing(target) as tmp, open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout)


def _probe(directory: Path) -> None:
    """Create and remove a temporary file in `directory` (what writing there needs; as
    root, permission bits alone do not tell); `OSError` passes through."""
    fd, tmp = tempfile.mkstemp(prefix=".cachefit-probe.", dir=directory)
    os.close(fd)
    os.unlink(tmp)


def check_output(path: str | os.PathLike[str]) -> None:
    """Before any work: a `UserError` when `save_output(path, ...)` could not write."""
    target = Path(path)
    if target.is_dir():
        raise UserError("is a directory, not a file", "name a file to write",
                        Location(str(target)))
    if is_special_file(target):
        return
    try:
        _probe(target.parent)
    except OSError as exc:
        raise UserError(f"cannot write this file: {exc.strerror}",
                        "check that its directory exists and is writable",
                        Location(str(target))) from exc


def make_output_dir(path: str | os.PathLike[str], todo: str) -> None:
    """Create the output directory `path` (and its parents) and check that files can be
    written there; a `UserError` naming it, with `todo`, when not."""
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        _probe(target)
    except OSError as exc:
        why = "it is not a directory" if isinstance(exc, FileExistsError) else exc.strerror
        raise UserError(f"cannot write the output directory: {why}", todo,
                        Location(str(target))) from exc


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
