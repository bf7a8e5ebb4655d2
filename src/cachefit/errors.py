"""The one exception hierarchy of cachefit.

Every error a user can cause is a `CachefitError`; the CLI alone prints it, as
``cachefit: error: file:line:col: what is wrong; what to do`` and exits with its `exit_code`.
Library code raises these and never prints or exits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a source file (1-based line and column); `line`/`col` may be 0 when unknown."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line and self.col:
            return f"{self.file}:{self.line}:{self.col}"
        if self.line:
            return f"{self.file}:{self.line}"
        return self.file


class CachefitError(Exception):
    """Base of all cachefit errors: a message, an optional hint and an optional location."""

    exit_code = 1

    def __init__(self, what: str, todo: str = "", location: Location | None = None,
                 details: list[str] | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.todo = todo
        self.location = location
        self.details = list(details or [])

    def message(self) -> str:
        """`file:line:col: what is wrong; what to do`, without the detail lines (also what
        `cachefit build` shows for a type it refused)."""
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.what}; {self.todo}" if self.todo else f"{where}{self.what}"

    def render(self) -> str:
        """The one-line message (plus optional detail lines) the CLI prints."""
        return "\n".join([f"cachefit: error: {self.message()}",
                          *("  " + d for d in self.details)])


class UserError(CachefitError):
    """Bad input from the user (arguments, files, names): exit code 2."""

    exit_code = 2


class ParseError(UserError):
    """A translation unit could not be parsed; `details` holds the compiler's first errors."""


class TypeNotFound(UserError):
    """No record of the requested name; `names`: the records the unit does define."""

    names: list[str] = []


class AmbiguousType(UserError):
    """The requested name matches records in several scopes."""


class UnsafeTransformation(UserError):
    """A transformation was refused because a named safety check failed."""


class Interrupted(CachefitError):
    """Ctrl-C, with something the user should know (where the work done so far is kept):
    exit code 130, as for any interrupt."""

    exit_code = 130


class ToolMissing(CachefitError):
    """An external tool (compiler, valgrind, qemu) is not installed: exit code 3."""

    exit_code = 3
