"""Files the user names as input: one check, one message, for every command.

`require_file` raises the `UserError` for a path that is not there, or that is a
directory where a file is expected, located at the path. It reads nothing and prints
nothing; opening the file (and its other `OSError`s) is the caller's.
"""

from __future__ import annotations

import os

from cachefit.errors import Location, UserError

__all__ = ["require_file"]


def require_file(path: str | os.PathLike[str], todo: str = "check the path",
                 kind: str = "file") -> None:
    """A `UserError` unless `path` names something that is not a directory: "no such
    KIND", or "is a directory, not a KIND" (`todo` says what to do)."""
    if os.path.isdir(path):
        raise UserError(f"is a directory, not a {kind}", todo, Location(os.fspath(path)))
    if not os.path.exists(path):
        raise UserError(f"no such {kind}", todo, Location(os.fspath(path)))
