"""Temporary directories that are gone when their block ends, an interrupt included.

`tempfile.TemporaryDirectory` leaves its directory behind when Ctrl-C lands at the wrong
moment: between `mkdtemp` and the registration of its finaliser, or in the middle of the
`rmtree` of its cleanup (the finaliser is detached first, so nothing removes the rest).
Under `make -j`, every compiler wrapper gets the same SIGINT, so in a long build one of
them is bound to be there. `scratch_directory` creates the directory and removes it with
the interrupt held (cachefit.interrupts.held), so the interrupt is raised before the
directory exists or after it is gone.

This module decides no names beyond the prefix and prints nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cachefit.interrupts import held

__all__ = ["scratch_directory"]


@contextmanager
def scratch_directory(prefix: str = "cachefit-", directory: str | Path | None = None
                      ) -> Iterator[Path]:
    """A new directory (in `directory`, else the system's temporary directory) for the
    block, removed with everything in it when the block ends, however it ends."""
    path: Path | None = None
    try:
        with held():        # an interrupt here is raised once `path` is known
            path = Path(tempfile.mkdtemp(prefix=prefix, dir=directory))
        yield path
    finally:
        if path is not None:
            with held():    # a removal that is not cut short
                shutil.rmtree(path, ignore_errors=True)
