"""Which record definitions a layout-plan key names when its place cannot tell (issue 27).

A program's definitions of one record name are keyed in the profile by where they are,
`rec@src/rec.h:7` (cachefit.trace.elf_objects). Two layouts at one place share it: a
header whose members depend on a macro that the units set differently (zstd's
DEBUGLEVEL, a `#ifdef` inside the member list). The first keeps the place key; the
others, and a definition whose place the debug information does not give, are keyed by
their layout fingerprint, `rec@50fc03a7` (cachefit.model.record_fingerprint). For such a name
the layout tells the definitions apart: a fingerprint key names the definitions with
that fingerprint, a place key those at its place whose fingerprint is none of the
name's fingerprint keys (`KeyTest`). The layout step asks it of the kept units' records
(`UnitFingerprints`, libclang), the optimize wrapper of the unit's record, and the
checks of the optimized binaries find the planned record among the name's definitions
in the DWARF (`planned_record`).

This module only tells definitions apart; it plans nothing, edits nothing and writes no
file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cachefit.errors import Location, TypeNotFound
from cachefit.model import Record
from cachefit.model.record_fingerprint import fingerprint_of
from cachefit.model.type_names import definition_matches, split_definition


@dataclass(frozen=True)
class KeyTest:
    """Whether a definition of the key's record name is the one the key names (see the
    module docstring). `others`: the fingerprints of the name's other fingerprint keys,
    which a place key leaves to them."""

    key: str
    where: str
    fingerprint: str | None
    others: frozenset[str]

    @property
    def by_layout(self) -> bool:
        """Whether the place alone does not tell (the fingerprint is needed)."""
        return self.fingerprint is not None or bool(self.others)

    def matches(self, file: str, line: int, fingerprint: Callable[[], str | None],
                cwd: str | None = None) -> bool:
        """Whether the definition at `file`:`line` (relative to `cwd`) with the
        fingerprint `fingerprint()` (asked only when needed) is the key's."""
        if self.fingerprint is not None:
            return fingerprint() == self.fingerprint
        if not definition_matches(self.where, file, line, cwd):
            return False
        return not self.others or fingerprint() not in self.others


def key_test(key: str, keys: Iterable[str]) -> KeyTest | None:
    """The test of a definition key among all the keys of a profile or a plan (None for
    a plain name)."""
    name, where = split_definition(key)
    if where is None:
        return None
    others: set[str] = set()
    for k in keys:
        n, w = split_definition(k)
        fp = fingerprint_of(w) if n == name and w is not None and k != key else None
        if fp is not None:
            others.add(fp)
    return KeyTest(key, where, fingerprint_of(where), frozenset(others))


def cursor_fingerprint(cursor: object) -> str:
    """The layout fingerprint of a libclang record definition, as the profile build's
    instrumented units compute it (cachefit.trace.unit_instrument)."""
    from cachefit.trace.unit_instrument import _fingerprint
    return _fingerprint(cursor)  # type: ignore[arg-type]


class UnitFingerprints:
    """The fingerprints of the record definitions of kept units, by their place in the
    unit (libclang's file, line and column), each unit parsed once when first asked."""

    def __init__(self, args: Mapping[str, Sequence[str]]) -> None:
        self.args = args
        self.found: dict[str, dict[tuple[str, int, int], str]] = {}

    def at(self, unit: str, place: Location) -> str | None:
        if unit not in self.found:
            self.found[unit] = self._read(unit)
        return self.found[unit].get((place.file, place.line, place.col))

    def _read(self, unit: str) -> dict[tuple[str, int, int], str]:
        from clang.cindex import CursorKind as CK

        from cachefit.frontend.clang_parse import parse_unit
        tu = parse_unit(unit, list(self.args.get(unit, ())), keep_bodies=False)
        out: dict[tuple[str, int, int], str] = {}
        for c in tu.cursor.walk_preorder():
            if c.kind in (CK.STRUCT_DECL, CK.UNION_DECL, CK.CLASS_DECL) and c.is_definition():
                loc = c.location
                if loc.file is not None:
                    out[(loc.file.name, loc.line, loc.column)] = cursor_fingerprint(c)
        return out


def planned_record(binary: str, test: KeyTest, members: Sequence[str], root: str) -> Record:
    """The record of `test`'s key in the optimized `binary`'s DWARF, for a name whose
    definitions the place does not tell apart: a definition of the name (at the key's
    place, for a place key) with the planned `members`, else the first such definition
    (whose order is then not the plan's). Raises TypeNotFound when there is none."""
    from cachefit.frontend.dwarf_definitions import decl_place
    from cachefit.frontend.dwarf_records import open_dwarf
    name = split_definition(test.key)[0]
    candidates: list[Record] = []
    with open_dwarf(binary) as reader:
        for die, rec in reader.definitions(name):
            place = decl_place(reader, die, root)
            if test.fingerprint is None and (
                    place is None or not definition_matches(test.where, *place, root)):
                continue
            if [f.name for f in rec.fields] == list(members):
                return rec
            candidates.append(rec)
    if candidates:
        return candidates[0]
    raise TypeNotFound(f"{binary}: no definition of {test.key} in its debug information",
                       f"its records named {name} are defined elsewhere")
