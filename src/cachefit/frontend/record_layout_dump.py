"""Base-class offsets and vtable pointers, as clang's own record-layout dump states them.

libclang reports field offsets but not where base subobjects or vtable pointers are; the
compiler knows, and `clang -Xclang -fdump-record-layouts-complete` prints it. This module runs
that dump on a unit and reads the block of one record. It never computes a layout itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from cachefit.errors import ParseError, ToolMissing
from cachefit.frontend.clang_parse import clang_compiler, language_args
from cachefit.model.type_names import type_key

_LINE = re.compile(r"^\s*(\d+)(?::\d+-\d+)?\s*\|(.*)$")
_KIND_WORDS = ("struct ", "class ", "union ")
_BASE_SUFFIXES = (" (primary base)", " (primary virtual base)", " (virtual base)", " (base)")


@dataclass
class DumpedBase:
    name: str
    offset: int
    virtual: bool
    primary: bool
    empty: bool
    size: int = 0  # sizeof the base, from its own block of the dump (0 when not dumped)


@dataclass
class DumpedRecord:
    """What the dump says about one record beyond its fields."""

    name: str
    size: int
    align: int
    bases: list[DumpedBase] = field(default_factory=list)
    vptr_offsets: list[int] = field(default_factory=list)


_INNER_KIND = re.compile(r"(?<=[<,(]) ?(?:struct|class|union|enum) ")


def _strip_kind(text: str) -> str:
    """The name without kind keywords, also inside template arguments (the dump writes
    `ns::node_base<struct ns::list_node>`; type spellings say `ns::node_base<ns::list_node>`)."""
    for word in _KIND_WORDS:
        if text.startswith(word):
            text = text[len(word):]
            break
    return _INNER_KIND.sub(lambda m: " " if m.group(0).startswith(" ") else "", text)


def parse_dump(text: str) -> dict[str, DumpedRecord]:
    """All records of a dump, by the name the compiler printed (without the kind keyword)."""
    records: dict[str, DumpedRecord] = {}
    blocks = text.split("*** Dumping AST Record Layout")
    for block in blocks[1:]:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = _LINE.match(lines[0])
        if not head:
            continue
        header = head.group(2)[1:]
        empty = header.endswith(" (empty)")
        name = _strip_kind(header.removesuffix(" (empty)")) if empty else _strip_kind(header)
        rec = DumpedRecord(name=name, size=0, align=0)
        for ln in lines[1:]:
            m = _LINE.match(ln)
            if m:
                body = m.group(2)[1:]
                depth = (len(body) - len(body.lstrip(" "))) // 2
                body = body.strip()
                offset = int(m.group(1))
                if body.endswith("vtable pointer)"):
                    rec.vptr_offsets.append(offset)
                elif depth == 1 and any(s in body for s in _BASE_SUFFIXES):
                    is_empty = body.endswith(" (empty)")
                    body = body.removesuffix(" (empty)")
                    suffix = next(s for s in _BASE_SUFFIXES if body.endswith(s))
                    rec.bases.append(DumpedBase(
                        name=_strip_kind(body[: -len(suffix)]), offset=offset,
                        virtual=suffix.endswith("virtual base)"),
                        primary=suffix.startswith(" (primary"), empty=is_empty))
                continue
            sm = re.search(r"sizeof=(\d+).*?align=(\d+)", ln)
            if sm:
                rec.size, rec.align = int(sm.group(1)), int(sm.group(2))
        records.setdefault(name, rec)
    for rec in records.values():
        for base in rec.bases:
            if base.name in records:
                base.size = records[base.name].size
    return records


def dump_record(path: str, args: Sequence[str], qualified_name: str,
                nameable: bool = True) -> DumpedRecord | None:
    """Run the layout dump on `path` and return the block of `qualified_name`.

    When the record can be named at file scope, a probe unit includes `path` and takes
    `sizeof` of it, so that template instantiations are laid out too.
    """
    compiler = clang_compiler()
    if compiler is None:
        raise ToolMissing("clang is not installed, and it is needed for base-class offsets",
                          "install clang-19 (make test installs it)")
    source = os.path.abspath(path)
    probe = None
    if nameable:
        fd, probe = tempfile.mkstemp(suffix=".cpp", prefix="cachefit-probe-")
        with os.fdopen(fd, "w") as fh:
            fh.write(f'#include "{source}"\n'
                     f"static_assert(sizeof({qualified_name}) > 0, \"\");\n")
        source = probe
    cmd = [compiler, "-fsyntax-only", "-w", "-Xclang", "-fdump-record-layouts-complete",
           *language_args(path, args), source]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    finally:
        if probe:
            os.unlink(probe)
    if proc.returncode != 0:
        if nameable:
            return dump_record(path, args, qualified_name, nameable=False)
        raise ParseError(f"clang could not lay out {qualified_name} in {path}",
                         "check the compiler arguments after '--'",
                         details=proc.stderr.strip().splitlines()[:5])
    wanted = type_key(qualified_name)
    for name, rec in parse_dump(proc.stdout).items():
        if type_key(name) == wanted:
            return rec
    return None
