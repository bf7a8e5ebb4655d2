"""Find the compiler's layout of a profiled type for the report.

In order of preference: the DWARF of an ELF file the user names (`--binary`), the DWARF of
the programs the profile says contributed (metadata `programs`, when they still exist and
define the type), or, as a last resort, a record rebuilt from the field spans the profile
stored. The last one is a prediction: the profile has no alignments, so each field's
alignment is inferred (the largest power of two up to 8 dividing both its offset and its
size) and every figure derived from it is labelled predicted. A type keyed by one
definition (`dict@src/dict.h:79`, issue 27) is that definition's record in the DWARF
(cachefit.frontend.dwarf_definitions.record_of: the one declared at that file and line),
never another record of the name. This module reads ELF files and the profile only; it
computes no line counts and prints nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from cachefit.errors import CachefitError, UserError
from cachefit.input_files import require_file
from cachefit.model import Field, Record
from cachefit.model.profile import TypeProfile

MAX_INFERRED_ALIGN = 8


@dataclass(frozen=True)
class FoundRecord:
    """A record and where its layout came from."""

    record: Record
    origin: str
    """Human-readable source: `DWARF of PATH` or `the profile's field spans`."""
    from_compiler: bool
    """True when offsets, sizes and alignments are the compiler's (DWARF)."""


def _dwarf_record(path: str, type_name: str) -> Record:
    from cachefit.frontend.dwarf_definitions import record_of
    return record_of(path, type_name)


def _inferred_align(offset: int, size: int) -> int:
    align = 1
    while (align * 2 <= MAX_INFERRED_ALIGN and offset % (align * 2) == 0
           and size % (align * 2) == 0):
        align *= 2
    return align


def record_from_profile(tp: TypeProfile) -> Record:
    """A struct with the profile's field spans, alignments inferred (see module docstring).

    Overlapping spans (union members, bit-fields sharing bytes) keep only the first field
    of each overlap, so the record stays a plain struct the placement model can handle."""
    fields: list[Field] = []
    end = 0
    for f in sorted(tp.fields, key=lambda f: (f.offset, -f.size)):
        if f.offset < end or f.size <= 0:
            continue
        fields.append(Field(name=f.name, type="?", offset=f.offset, size=f.size,
                            align=_inferred_align(f.offset, f.size)))
        end = f.offset + f.size
    align = max((f.align for f in fields), default=1)
    while tp.size % align:
        align //= 2
    return Record(name=tp.name, kind="struct", size=tp.size, align=max(align, 1),
                  fields=fields)


def find_record(tp: TypeProfile, *, binary: str | None,
                programs: Sequence[str]) -> FoundRecord:
    """The best available layout of `tp.name` (see the module docstring).

    A `binary` the user named must define the type (errors propagate); the profile's
    `programs` are tried quietly and skipped when missing or without the type."""
    if binary is not None:
        require_file(binary, "pass the executable built from the traced sources (with -g)")
        return FoundRecord(_dwarf_record(binary, tp.name), f"DWARF of {binary}", True)
    for prog in programs:
        if not os.path.isfile(prog):
            continue
        try:
            rec = _dwarf_record(prog, tp.name)
        except CachefitError:
            continue
        if rec.size == tp.size:
            return FoundRecord(rec, f"DWARF of {prog}", True)
    if not tp.fields:
        raise UserError(f"the profile stores no layout of {tp.name} and no traced program "
                        "with its debug information was found",
                        "pass --binary ELF (built with -g)")
    return FoundRecord(record_from_profile(tp),
                       "the profile's field spans (alignment inferred; pass --binary for "
                       "the compiler's)", False)
