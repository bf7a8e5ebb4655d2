"""Where the compiler puts the base subobjects of the target, and how big the class is.

Flattening keeps the data members in the order the compiler laid them out, so that the flat
class is the original minus its vtable pointers and the padding between subobjects: the base
subobjects' offsets come from clang's own record-layout dump, read by
`cachefit.frontend.record_layout_dump`, never from a computation of ours. This module only
picks the target's block and answers flattening's questions about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cachefit.frontend.record_layout_dump import DumpedRecord, dump_unit
from cachefit.model.type_names import unqualified_type_key


@dataclass
class Subobject:
    key: str            # the class's key (model.type_names.unqualified_type_key)
    offset: int
    virtual_part: bool  # inside a virtual base subobject (laid out after the fields)
    depth: int


@dataclass
class TargetLayout:
    size: int = 0
    align: int = 0
    vptrs: int = 0
    subobjects: list[Subobject] = field(default_factory=list)

    @classmethod
    def of(cls, rec: DumpedRecord) -> TargetLayout:
        return cls(rec.size, rec.align, rec.vptr_count,
                   [Subobject(unqualified_type_key(s.name), s.offset, s.in_virtual_part,
                              s.depth) for s in rec.subobjects])

    def order_key(self, key: str) -> tuple[int, int] | None:
        """(0 for the non-virtual part or 1 for the virtual part, offset) of a class."""
        hits = [s for s in self.subobjects if s.key == key]
        if not hits:
            return None
        s = min(hits, key=lambda s: (s.virtual_part, s.offset))
        return (1 if s.virtual_part else 0, s.offset)


def dump_target(path: str, args: Sequence[str], target: str,
                unsaved_text: bytes | None = None) -> TargetLayout | None:
    """Run clang's record-layout dump on the unit `path` and read the target's block.

    Returns None when clang is not available or the target has no block (the caller then
    falls back to the order in which C++ constructs the bases).
    """
    records = dump_unit(path, args, unsaved_text)
    wanted = unqualified_type_key(target)
    for name, rec in (records or {}).items():
        if unqualified_type_key(name) == wanted:
            return TargetLayout.of(rec)
    return None
