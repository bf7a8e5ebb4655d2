"""The layout fingerprint of one record definition (issue 27: one record per definition).

A profile build's instrumented code registers an object of a traced record `dict` as
`dict@FP`, FP being this fingerprint of the definition the unit saw (from libclang:
cachefit.trace.unit_instrument); the link step computes the same fingerprint of every
definition of `dict` the program's DWARF holds (cachefit.frontend.dwarf_definitions
`die_fingerprint`, used by cachefit.trace.elf_objects and by the report's lookup of a key
`dict@FP`). When the program has one definition, the runtime files `dict@FP` under plain
`dict` (runtime/src/cf_core.c, `cf_type_id`); when it has several, the blob maps each
fingerprint to the definition's readable name, `dict@path:line`.

The fingerprint covers what both readers see alike: the record's size and its named
members in declaration order with their byte offsets (a bit-field's offset is left out;
unnamed members are left out). Two definitions with equal fingerprints are one type to
the tracer. This module only computes the fingerprint and tells one in a key; it reads
no file.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable

FINGERPRINT_DIGITS = 8


def fingerprint(size: int, members: Iterable[tuple[str, int | None]]) -> str:
    """Eight hex digits from the record's size and its named members (name, byte offset
    or None for a bit-field), in declaration order."""
    words = [str(size)]
    for name, offset in members:
        if name:
            words.append(name if offset is None else f"{name}:{offset}")
    return hashlib.sha1(";".join(words).encode()).hexdigest()[:FINGERPRINT_DIGITS]


def fingerprint_of(where: str) -> str | None:
    """The fingerprint a key's place part is (`50fc03a7`), None for a path."""
    if len(where) == FINGERPRINT_DIGITS and all(c in string.hexdigits for c in where):
        return where.lower()
    return None
