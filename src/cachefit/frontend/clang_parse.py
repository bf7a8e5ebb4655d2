"""Parse C and C++ translation units with libclang and report fatal diagnostics.

Chooses the libclang library (the system's libclang-19 when installed, so parsing agrees with
the clang-19 compiler cachefit checks against; otherwise the `libclang` wheel's own library),
guesses the language from the file name when the arguments do not say, and turns errors
that stop parsing into a `ParseError` carrying the compiler's first messages.
It does not extract records or edit anything.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import clang.cindex as ci

from cachefit.errors import Location, ParseError
from cachefit.input_files import require_file

_SYSTEM_LIBCLANG = (
    "/usr/lib/llvm-19/lib/libclang-19.so.1",
    "/usr/lib/x86_64-linux-gnu/libclang-19.so.1",
)
_configured = False

C_SUFFIXES = {".c", ".i"}
CXX_SUFFIXES = {".cc", ".cpp", ".cxx", ".c++", ".C", ".ii", ".hh", ".hpp", ".hxx", ".h++",
                ".H", ".tcc", ".ipp"}


def configure_libclang() -> None:
    """Point the bindings at a libclang once (env CACHEFIT_LIBCLANG overrides)."""
    global _configured
    if _configured:
        return
    chosen = os.environ.get("CACHEFIT_LIBCLANG") or next(
        (p for p in _SYSTEM_LIBCLANG if os.path.exists(p)), None)
    if chosen and not ci.Config.loaded:
        ci.Config.set_library_file(chosen)
    _configured = True


def clang_compiler() -> str | None:
    """The clang driver matching the library (CACHEFIT_CLANG, clang-19, then clang)."""
    env = os.environ.get("CACHEFIT_CLANG")
    if env:
        return env
    return shutil.which("clang-19") or shutil.which("clang")


QUIET = "-Wno-unknown-warning-option"
"""Appended for libclang and clang: a build recorded with gcc has warning options clang
does not know (-Wlogical-op), which it would report for every unit parsed (and -Werror
would make errors)."""


BODYLESS_QUIET = ("-Wno-unused", "-Wno-unused-const-variable", "-Wno-unused-member-function",
                  "-Wno-unused-template")
"""Appended when function bodies are skipped: static functions, variables and private
fields used only in bodies look unused there, and a build's -Werror (nginx's `-W -Wall
-Werror`) would turn those warnings into errors the real compile does not have."""


def language_args(path: str, args: Sequence[str]) -> list[str]:
    """The arguments clang needs for `path`: `-x` for files whose name does not tell the
    language, and QUIET last."""
    return [*_language(path, args), *args, QUIET]


def _language(path: str, args: Sequence[str]) -> list[str]:
    if "-x" in args or any(a.startswith("-x") and len(a) > 2 for a in args):
        return []
    suffix = Path(path).suffix
    if suffix in C_SUFFIXES:
        return ["-x", "c"]
    if suffix in CXX_SUFFIXES:
        return ["-x", "c++"]
    if suffix == ".h":
        is_c = any(a.startswith(("-std=c", "-std=gnu")) and "++" not in a for a in args)
        return ["-x", "c" if is_c else "c++"]
    return []


def _index() -> ci.Index:
    configure_libclang()
    return ci.Index.create()


def parse_unit(path: str, args: Sequence[str] = (),
               unsaved: Sequence[tuple[str, str]] = (),
               *, keep_bodies: bool = True, detailed: bool = False) -> ci.TranslationUnit:
    """Parse `path` with compiler `args`; raise ParseError on errors that stop parsing."""
    if not unsaved:
        require_file(path)
    options = 0
    if not keep_bodies:
        options |= ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES
    if detailed:
        options |= ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    full_args = language_args(path, args)
    if not keep_bodies:
        full_args += BODYLESS_QUIET
    try:
        tu = _index().parse(path, args=full_args, unsaved_files=list(unsaved), options=options)
    except ci.TranslationUnitLoadError as exc:
        raise ParseError(f"libclang could not parse {path}",
                         "check the file and the compiler arguments after '--'",
                         Location(path)) from exc
    check_diagnostics(tu, path)
    return tu


def check_diagnostics(tu: ci.TranslationUnit, path: str) -> None:
    """Raise ParseError with the first errors when the unit has any error. In a
    preprocessed unit (.i/.ii, the build-time mode) errors inside system headers are
    ignored: g++/gcc output carries GCC-only attributes clang rejects there."""
    preprocessed = path.endswith((".i", ".ii"))
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error
              and not (preprocessed and d.location.file is not None
                       and d.location.is_in_system_header)]
    if not errors:
        return
    first = errors[0]
    loc = first.location
    where = Location(loc.file.name if loc.file else path, loc.line, loc.column)
    details = []
    for d in errors[:5]:
        dl = d.location
        details.append(f"{dl.file.name if dl.file else path}:{dl.line}:{dl.column}: "
                       f"error: {d.spelling}")
    if len(errors) > 5:
        details.append(f"... and {len(errors) - 5} more errors")
    raise ParseError(f"{path} does not compile: {first.spelling}",
                     "fix the code or pass the right flags after '--' (or -p BUILD_DIR)",
                     where, details)
