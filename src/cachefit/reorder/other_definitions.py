"""Definitions of the record in other files: units that would disagree on its layout.

A project may hold two copies of a header (jansson's build copies `src/jansson.h` to
`build/include/jansson.h`: the library's units include one, the tests the other). Every
unit then sees the record (same USR, i.e. the same qualified name) defined at a different
place, and rewriting one copy leaves the units disagreeing on the layout. `DefinitionSite`
is where one unit sees the definition; `duplicate_refusal` refuses when a unit sees it
elsewhere than the definition being rewritten (compared by real path and line, so a header
reached through a symlink or another relative path is the same definition). Two definitions
that are each in the unit's own source file (two `.c` files with their own `struct state`,
or preprocessed units of the build-time mode), or that declare different members (two
unrelated `struct node` of one tag, or one per configuration), are distinct records and are
not refused; `namesakes` lists those of other files, for a warning (redis: `dict` of
deps/hiredis/dict.h and of src/dict.h, the first unit that defines one decides which is
rewritten).
Reads cursors only; never edits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.edits import display_path
from cachefit.errors import Location
from cachefit.reorder.constraints import Refusal


@dataclass(frozen=True)
class DefinitionSite:
    """Where one unit sees the record's definition."""

    real: str                 # real path of the file (symlinks and `..` resolved)
    line: int
    location: Location        # as the front end names it
    in_source: bool           # in the unit's own source file, not in a header
    fields: tuple[str, ...] = ()   # its data members' names, in declaration order

    @property
    def key(self) -> tuple[str, int]:
        return (self.real, self.line)


def definition_site(cursor: ci.Cursor, unit_file: str) -> DefinitionSite | None:
    """The site of the definition `cursor` seen by the unit of source file `unit_file`."""
    loc = cursor.location
    if loc.file is None:
        return None
    real = os.path.realpath(loc.file.name)
    fields = tuple(c.spelling for c in cursor.get_children()
                   if c.kind == ci.CursorKind.FIELD_DECL)
    return DefinitionSite(real, loc.line, Location(loc.file.name, loc.line, loc.column),
                          real == os.path.realpath(unit_file), fields)


def duplicate_refusal(target: DefinitionSite, sites: Iterable[DefinitionSite],
                      name: str) -> Refusal | None:
    """A refusal when some unit sees the record defined elsewhere than at `target`."""
    for s in sites:
        if s.key == target.key or (s.in_source and target.in_source) or \
                s.fields != target.fields:
            continue
        here = f"{display_path(target.location.file)}:{target.line}"
        there = f"{display_path(s.location.file)}:{s.line}"
        where = "two files" if s.real != target.real else "two places"
        return Refusal(f"{name} is defined in {where}, {here} and {there}: units would "
                       "disagree on its layout",
                       "make one include the other, or reorder the copy too",
                       target.location)
    return None


def namesakes(target: DefinitionSite, sites: Iterable[DefinitionSite], name: str) -> list[str]:
    """Warnings for records of the same name with other members in other files (distinct
    records that `duplicate_refusal` lets be): which one is rewritten, and how to choose."""
    seen: set[tuple[str, int]] = set()
    out: list[str] = []
    for s in sites:
        if s.key in seen or s.real == target.real or s.fields == target.fields:
            continue
        seen.add(s.key)
        out.append(f"another {name}, with other members, is defined at "
                   f"{display_path(s.location.file)}:{s.line}; the one at "
                   f"{display_path(target.location.file)}:{target.line} is rewritten (to "
                   "rewrite the other, give the file that defines it first)")
    return out
