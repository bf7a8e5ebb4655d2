"""Record layouts as the compiler computed them: records, fields, bases, source extents.

This module only holds data and derives views of it (holes, cache lines, JSON). It never
computes a layout itself: offsets, sizes and alignments come from a front end that asked
the compiler (libclang) or read its debug information (DWARF).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

RecordKind = Literal["struct", "class", "union"]
Access = Literal["public", "protected", "private"]


@dataclass(frozen=True)
class SourceExtent:
    """Where a declaration is written: file and 1-based begin/end line and column."""

    file: str
    begin_line: int
    begin_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Field:
    """A data member.

    `offset` is in bytes from the start of the record. For a bit-field, `bit_offset` is its
    position in bits from the start of the record and `bit_size` its width; `offset` is
    `bit_offset // 8` and `size` the size of its declared type (its storage unit), as pahole
    shows it. `bit_offset`/`bit_size` are None for ordinary fields.
    """

    name: str
    type: str
    offset: int
    size: int
    align: int
    access: Access = "public"
    bit_offset: int | None = None
    bit_size: int | None = None
    extent: SourceExtent | None = None
    # For a member of an anonymous struct/union: a tag naming that anonymous member; the
    # members sharing a tag move together.
    anonymous_parent: str | None = None

    @property
    def is_bitfield(self) -> bool:
        return self.bit_size is not None

    @property
    def end(self) -> int:
        """One past the last byte this field occupies."""
        if self.bit_offset is not None and self.bit_size is not None:
            return (self.bit_offset + self.bit_size + 7) // 8
        return self.offset + self.size

    @property
    def first_byte(self) -> int:
        return self.offset

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "offset": self.offset,
            "size": self.size,
            "align": self.align,
            "bit_offset": self.bit_offset,
            "bit_size": self.bit_size,
            "access": self.access,
        }


@dataclass(frozen=True)
class UnnamedBitfield:
    """An unnamed bit-field (`int : 3;` padding, `int : 0;` barrier): not a member, but the
    compiler places it like a bit-field, so it shapes the layout. `bit_offset` is where the
    compiler put it (for `: 0`, where it moved the bit cursor to); `size`/`align` are its
    declared type's; `after` is the named field declared right before it (None: it comes
    before every named field)."""

    type: str
    bit_offset: int
    bit_size: int
    size: int
    align: int
    after: str | None


@dataclass(frozen=True)
class Base:
    """A direct base class subobject at `offset` (for a virtual base: its offset in the
    complete object of this record)."""

    name: str
    offset: int
    size: int
    virtual: bool = False
    empty: bool = False  # an empty base occupies no bytes (empty-base optimisation)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "offset": self.offset, "size": self.size,
                "virtual": self.virtual}


@dataclass(frozen=True)
class Hole:
    """Unused bytes (padding) between members, or at the end of the record."""

    offset: int
    size: int


@dataclass
class Record:
    """A struct, class or union with its members in declaration order."""

    name: str
    kind: RecordKind
    size: int
    align: int
    fields: list[Field] = field(default_factory=list)
    bases: list[Base] = field(default_factory=list)
    vptr_offset: int | None = None
    extent: SourceExtent | None = None
    # Unnamed bit-fields of the record itself (not of anonymous members), in declaration
    # order; they are not fields (see UnnamedBitfield).
    unnamed_bitfields: list[UnnamedBitfield] = field(default_factory=list)

    def field_named(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def occupied(self) -> list[tuple[int, int]]:
        """Byte ranges [begin, end) used by the vptr, bases and fields, sorted and merged."""
        spans: list[tuple[int, int]] = []
        if self.vptr_offset is not None:
            spans.append((self.vptr_offset, self.vptr_offset + 8))
        spans += [(b.offset, b.offset + b.size) for b in self.bases if b.size > 0 and not b.empty]
        spans += [(f.offset, f.end) for f in self.fields if f.end > f.offset]
        spans.sort()
        merged: list[tuple[int, int]] = []
        for begin, end in spans:
            if merged and begin <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((begin, end))
        return merged

    def holes(self) -> list[Hole]:
        """Padding: every byte of [0, size) not covered by the vptr, a base or a field."""
        if self.kind == "union":
            used = max((f.end for f in self.fields), default=0)
            return [Hole(used, self.size - used)] if used < self.size else []
        holes: list[Hole] = []
        cursor = 0
        for begin, end in self.occupied():
            if begin > cursor:
                holes.append(Hole(cursor, begin - cursor))
            cursor = max(cursor, end)
        if cursor < self.size:
            holes.append(Hole(cursor, self.size - cursor))
        return holes

    def cache_lines(self, line: int = 64) -> int:
        """Cache lines the record spans when it starts on a line boundary."""
        return (self.size + line - 1) // line if self.size else 0

    def to_json(self, cache_line: int = 64) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "size": self.size,
            "align": self.align,
            "cache_line": cache_line,
            "fields": [f.to_json() for f in self.fields],
            "bases": [b.to_json() for b in self.bases],
            "vptr_offset": self.vptr_offset,
        }
