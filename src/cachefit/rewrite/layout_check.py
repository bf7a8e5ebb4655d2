"""Check a rewritten record against the compiler: re-parse the new text and read its layout.

After the member list is rewritten, the unit that defines the record is parsed again by
libclang with the new text as an unsaved file, and the record's layout is read from the
compiler: the order of the fields, every offset, sizeof and alignof. `check_layout` refuses
(`UnsafeTransformation`, nothing is written) when the order is not the one intended, a field
is not aligned as it was, a pinned field moved, or sizeof/alignof differ from what was
predicted. Offsets are never computed here, only read. New text that does not compile is
refused as cachefit's failure (the original compiled), not as an error in the user's file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cachefit.errors import Location, ParseError, UnsafeTransformation
from cachefit.frontend.clang_parse import parse_unit
from cachefit.frontend.clang_records import record_from_cursor
from cachefit.frontend.record_cursor import find_record_cursor
from cachefit.model import Record


@dataclass(frozen=True)
class Expectation:
    """What the rewritten record must look like."""

    order: tuple[str, ...]
    size: int | None = None              # predicted sizeof (None: not predicted)
    align: int | None = None             # alignof; None: unchanged from before
    offsets: Mapping[str, int] | None = None   # predicted offset per field, if known
    pins: Mapping[str, int] | None = None      # fields that must keep these offsets
    relaxed: Mapping[str, int] | None = None   # fields allowed a smaller alignment


def reparse_record(path: str, args: Sequence[str], type_name: str,
                   overlays: Mapping[str, bytes], where: Location | None = None) -> Record:
    """The compiler's layout of `type_name` in `path` with `overlays` (file -> new bytes);
    `where` (the record's first member) locates the error when the new text does not
    compile."""
    unsaved = [(f, data.decode("utf-8", errors="surrogateescape")) for f, data in
               overlays.items()]
    try:
        tu = parse_unit(path, args, unsaved)
    except ParseError as exc:
        # The original compiled (it was analysed): the rewrite broke it, and the error's
        # line is one of the new text, not of the file as it is.
        at = exc.location
        new = f" (at {at.file}:{at.line}:{at.col} of the reordered text)" if at else ""
        first = exc.what.split(" does not compile: ", 1)[-1]
        raise UnsafeTransformation(
            f"the reordered {type_name} does not compile: {first}{new}",
            "nothing was written; this is a cachefit limitation: report it with the input, "
            "or reorder by hand", where or Location(path)) from exc
    cursor = find_record_cursor(tu, type_name, path, args)
    return record_from_cursor(cursor, path, args)


def check_layout(before: Record, after: Record, expect: Expectation,
                 where: Location | None) -> None:
    """Raise UnsafeTransformation if `after` is not the layout intended."""
    problems: list[str] = []
    declared = tuple(f.name for f in after.fields)
    if declared != expect.order:
        problems.append(f"the fields are declared as {', '.join(declared)}, not in the "
                        f"intended order {', '.join(expect.order)}")
    old = {f.name: f for f in before.fields}
    relaxed = expect.relaxed or {}
    for f in after.fields:
        if f.is_bitfield:
            continue
        need = relaxed.get(f.name, old[f.name].align if f.name in old else f.align)
        if need > 1 and f.offset % need:
            problems.append(f"{f.name} is at offset {f.offset}, not a multiple of its "
                            f"alignment {need}")
    if expect.size is not None and after.size != expect.size:
        problems.append(f"sizeof is {after.size}, the optimizer predicted {expect.size}")
    want_align = expect.align if expect.align is not None else before.align
    if after.align != want_align:
        problems.append(f"alignof is {after.align}, expected {want_align}")
    new_off = {f.name: f.offset for f in after.fields}
    for name, off in (expect.offsets or {}).items():
        if name in new_off and new_off[name] != off:
            problems.append(f"{name} is at offset {new_off[name]}, predicted {off}")
    for name, off in (expect.pins or {}).items():
        if new_off.get(name) != off:
            problems.append(f"{name} must stay at offset {off} but is at {new_off.get(name)}")
    if problems:
        todo = "nothing was written; report this with the input"
        if expect.size is not None and after.size != expect.size:
            # the usual cause: this unit defines the record otherwise than the traced build
            # (other macros or options: zstd's DEBUGLEVEL turns its mutexes into pointers)
            todo = (f"nothing was written; if this unit's {before.name} (sizeof "
                    f"{before.size} before the rewrite) is not the traced definition, build it "
                    "with the macros and options of the profile build; else report this with "
                    "the input")
        raise UnsafeTransformation(
            f"the compiler's layout of the rewritten {before.name} is not the one intended: "
            + problems[0], todo, where, problems[1:])
