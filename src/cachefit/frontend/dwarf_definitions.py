"""Where a record is defined, by its DWARF, and the record a definition key names (issue 27).

A program may define two records with one tag (Redis's `struct dict` and hiredis's); the
profile, the plan and the report then key each by its definition, `dict@src/dict.h:79`
(cachefit.model.type_names). `decl_place` reads a record DIE's file and line
(DW_AT_decl_file, DW_AT_decl_line; the path relative to the project's directory,
`project_root`; the link step names definitions so: cachefit.trace.elf_objects), and
`record_of` finds the record a key names in a binary's debug
information: for a plain name the front end's record of it (dwarf_records.read_record),
for a definition key the definition of the name declared at that place, never another
record of the name. A key by layout fingerprint (`dict@1a2b3c4d`: a second layout at
one place, or a definition whose place the DWARF does not tell) names the definition
whose `die_fingerprint` it is: the DWARF side of cachefit.model.record_fingerprint,
which the link step (cachefit.trace.elf_objects) uses too. This module only reads ELF
files.
"""

from __future__ import annotations

import os
from pathlib import Path

from elftools.dwarf.die import DIE

from cachefit.errors import TypeNotFound
from cachefit.frontend.dwarf_records import DwarfReader, open_dwarf, read_record
from cachefit.model import Record
from cachefit.model.record_fingerprint import fingerprint, fingerprint_of
from cachefit.model.type_names import definition_matches, split_definition


def project_root() -> str:
    """The directory the readable keys' paths are relative to: that of the project file
    the build runs with (`CACHEFIT_CONFIG`), else the current directory."""
    config = os.environ.get("CACHEFIT_CONFIG")
    return str(Path(config).resolve().parent) if config else os.getcwd()


def _text(die: DIE, name: str) -> str | None:
    attr = die.attributes.get(name)
    if attr is None:
        return None
    v = attr.value
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _decl_file(reader: DwarfReader, die: DIE) -> tuple[str, int] | None:
    """The absolute file and the line where a record is defined, when the DWARF says."""
    index = die.attributes.get("DW_AT_decl_file")
    line = die.attributes.get("DW_AT_decl_line")
    if index is None or line is None:
        return None
    files = reader._files_of(die)
    if not 0 <= int(index.value) < len(files) or not files[int(index.value)]:
        return None
    comp_dir = _text(die.cu.get_top_DIE(), "DW_AT_comp_dir") or ""
    return os.path.normpath(os.path.join(comp_dir, files[int(index.value)])), int(line.value)


def decl_place(reader: DwarfReader, die: DIE, root: str) -> tuple[str, int] | None:
    """The file (relative to `root` when inside it, else to the current directory when
    inside that) and line where a record is defined."""
    found = _decl_file(reader, die)
    if found is None:
        return None
    path, line = found
    for base in (root, os.getcwd()):
        rel = os.path.relpath(path, base) if os.path.isabs(path) else path
        if not rel.startswith(".."):
            return rel, line
    return path, line


def die_fingerprint(reader: DwarfReader, die: DIE) -> str:
    """The layout fingerprint of a record DIE (cachefit.model.record_fingerprint): its
    size and its named data members with their byte offsets (none for a bit-field); a C++
    vtable pointer (an artificial member, `_vptr$X`, which libclang does not list) is left
    out."""
    members: list[tuple[str, int | None]] = []
    for m in die.iter_children():
        if m.tag != "DW_TAG_member" or "DW_AT_external" in m.attributes \
                or "DW_AT_declaration" in m.attributes or "DW_AT_artificial" in m.attributes:
            continue
        name = _text(m, "DW_AT_name")
        if not name:
            continue
        bits = "DW_AT_bit_size" in m.attributes or "DW_AT_data_bit_offset" in m.attributes
        members.append((name, None if bits else reader.location(m)[0]))
    return fingerprint(max(reader.type_size(die), 0), members)


def record_of(binary: str, key: str) -> Record:
    """The record `key` names in the DWARF of `binary` (see the module docstring): a
    definition key's path names the file whose absolute path is it or ends with it
    (type_names.definition_matches); a fingerprint key names the definition of the name
    with that layout fingerprint. Raises TypeNotFound when the binary has no such
    definition, UserError when it is no ELF file or has no DWARF."""
    name, where = split_definition(key)
    if where is None:
        return read_record(binary, key)
    fp = fingerprint_of(where)
    with open_dwarf(binary) as reader:
        for die, rec in reader.definitions(name):
            if fp is not None:
                if die_fingerprint(reader, die) == fp:
                    return rec
                continue
            found = _decl_file(reader, die)
            if found is not None and definition_matches(where, *found):
                return rec
    if fp is not None:
        raise TypeNotFound(f"{binary}: no definition of {name} with the layout fingerprint "
                           f"{fp} in its debug information",
                           f"its records named {name} have other layouts")
    raise TypeNotFound(f"{binary}: no definition of {name} at {where} in its debug "
                       "information", f"its records named {name} are defined elsewhere")
