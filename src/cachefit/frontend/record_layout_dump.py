"""Base-class offsets and vtable pointers, as clang's own record-layout dump states them.

libclang reports field offsets but not where base subobjects or vtable pointers are; the
compiler knows, and `clang -Xclang -fdump-record-layouts-complete` prints it. This module runs
that dump (`dump_record` on a probe that names one record, `dump_unit` on a unit as it is) and
parses it (`parse_dump`): per record its size, its direct bases, every base subobject at any
depth and its vtable pointers. It is the one reader of that dump (the front end's record
layouts and flattening use it). It never computes a layout itself.
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
from cachefit.model.type_names import type_key, without_kind_keywords

_LINE = re.compile(r"^\s*(\d+)(?::\d+-\d+)?\s*\|(.*)$")
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
class DumpedSubobject:
    """A base-class subobject of a record at any depth: a base, a base of a base, ..."""

    name: str
    offset: int
    depth: int              # 1: a base of the record itself, 2: a base of that base, ...
    in_virtual_part: bool   # a virtual base, or inside one (laid out after the fields)
    # a dynamic base whose vtable pointer the dump leaves out (its primary base is a
    # virtual base laid out elsewhere): nothing of it is printed at its own offset
    vptr_left_out: bool


@dataclass
class DumpedRecord:
    """What the dump says about one record beyond its fields."""

    name: str
    size: int
    align: int
    bases: list[DumpedBase] = field(default_factory=list)
    vptr_offsets: list[int] = field(default_factory=list)   # at any depth, in dump order
    subobjects: list[DumpedSubobject] = field(default_factory=list)

    @property
    def vptr_count(self) -> int:
        """How many vtable pointers the object holds: the printed ones and those the dump
        leaves out (`DumpedSubobject.vptr_left_out`), one per offset."""
        return len(set(self.vptr_offsets) |
                   {s.offset for s in self.subobjects if s.vptr_left_out})


def _base_line(body: str) -> tuple[str, str, bool] | None:
    """(name, kind of base, empty) of a line naming a base subobject, else None."""
    empty = body.endswith(" (empty)")
    rest = body.removesuffix(" (empty)")
    suffix = next((s for s in _BASE_SUFFIXES if rest.endswith(s)), None)
    if suffix is None:
        return None
    return without_kind_keywords(rest[: -len(suffix)]), suffix, empty


def _subobjects(lines: list[tuple[int, int, str]]) -> list[DumpedSubobject]:
    """The base subobjects among a block's (offset, depth, text) lines: base lines right
    inside the record or right inside another base line (not bases of a field's type)."""
    out: list[DumpedSubobject] = []
    stack: list[tuple[int, bool]] = []   # (depth, in the virtual part) of open base lines
    for i, (offset, depth, body) in enumerate(lines):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        base = _base_line(body)
        if base is None or not (depth == 1 and not stack or
                                stack and stack[-1][0] == depth - 1):
            continue
        name, suffix, empty = base
        virtual = suffix.endswith("virtual base)") or bool(stack) and stack[-1][1]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        left_out = not empty and (nxt is None or nxt[1] <= depth or nxt[0] > offset)
        out.append(DumpedSubobject(name, offset, depth, virtual, left_out))
        stack.append((depth, virtual))
    return out


def parse_dump(text: str) -> dict[str, DumpedRecord]:
    """All records of a dump, by the name the compiler printed (without kind keywords); the
    first block of a name when the dump has several."""
    records: dict[str, DumpedRecord] = {}
    blocks = text.split("*** Dumping AST Record Layout")
    for block in blocks[1:]:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = _LINE.match(lines[0])
        if not head:
            continue
        name = without_kind_keywords(head.group(2)[1:].removesuffix(" (empty)"))
        rec = DumpedRecord(name=name, size=0, align=0)
        parsed: list[tuple[int, int, str]] = []
        for ln in lines[1:]:
            m = _LINE.match(ln)
            if m:
                body = m.group(2)[1:]
                depth = (len(body) - len(body.lstrip(" "))) // 2
                parsed.append((int(m.group(1)), depth, body.strip()))
                continue
            sm = re.search(r"sizeof=(\d+).*?align=(\d+)", ln)
            if sm:
                rec.size, rec.align = int(sm.group(1)), int(sm.group(2))
        for offset, depth, body in parsed:
            base = _base_line(body)
            if body.endswith("vtable pointer)"):
                rec.vptr_offsets.append(offset)
            elif depth == 1 and base is not None:
                bname, suffix, empty = base
                rec.bases.append(DumpedBase(
                    name=bname, offset=offset, virtual=suffix.endswith("virtual base)"),
                    primary=suffix.startswith(" (primary"), empty=empty))
        rec.subobjects = _subobjects(parsed)
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


def dump_unit(path: str, args: Sequence[str],
              unsaved_text: bytes | None = None) -> dict[str, DumpedRecord] | None:
    """The dump of the unit `path` as it is (`unsaved_text`: its contents, read from stdin),
    every record by name; None when clang is not installed.

    Errors do not stop the reading: a unit preprocessed by g++ has errors in system headers
    that leave the layout of the user's records intact."""
    compiler = clang_compiler()
    if compiler is None:
        return None
    cmd = [compiler, "-fsyntax-only", "-w", "-ferror-limit=0", "-Xclang",
           "-fdump-record-layouts-complete", *language_args(path, args),
           "-" if unsaved_text is not None else path]
    proc = subprocess.run(cmd, input=unsaved_text, capture_output=True, check=False)
    return parse_dump(proc.stdout.decode(errors="replace"))
