"""Where the compiler puts the base subobjects of the target, and how big the class is.

Flattening keeps the data members in the order the compiler laid them out, so that the flat
class is the original minus its vtable pointers and the padding between subobjects: the base
subobjects' offsets come from clang's own record-layout dump (`-fdump-record-layouts-complete`),
never from a computation of ours.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from cachefit.flatten.cx import normalize_type_name
from cachefit.frontend.clang_parse import clang_compiler, language_args

_LINE = re.compile(r"^\s*(\d+)(?::\d+-\d+)?\s*\|(.*)$")
_BASE = re.compile(r"^(.*) \((primary base|base|virtual base)\)( \(empty\))?$")


@dataclass
class Subobject:
    key: str            # normalized class name
    offset: int
    virtual_part: bool  # inside a virtual base subobject (laid out after the fields)
    depth: int


@dataclass
class TargetLayout:
    size: int = 0
    align: int = 0
    vptrs: int = 0
    subobjects: list[Subobject] = field(default_factory=list)

    def order_key(self, key: str) -> tuple[int, int] | None:
        """(0 for the non-virtual part or 1 for the virtual part, offset) of a class."""
        hits = [s for s in self.subobjects if s.key == key]
        if not hits:
            return None
        s = min(hits, key=lambda s: (s.virtual_part, s.offset))
        return (1 if s.virtual_part else 0, s.offset)

    def is_virtual_part(self, key: str) -> bool:
        k = self.order_key(key)
        return bool(k and k[0] == 1)


def parse_target_block(text: str, target: str) -> TargetLayout | None:
    """The layout block of `target` in a clang record-layout dump."""
    wanted = normalize_type_name(target)
    for block in text.split("*** Dumping AST Record Layout")[1:]:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = _LINE.match(lines[0])
        if not head:
            continue
        name = head.group(2)[1:].removesuffix(" (empty)")
        if normalize_type_name(name) != wanted:
            continue
        out = TargetLayout()
        stack: list[tuple[int, bool]] = []   # (depth, virtual part) of open base lines
        parsed: list[tuple[int, int, str]] = []   # (offset, depth, body)
        for ln in lines[1:]:
            m = _LINE.match(ln)
            if not m:
                sm = re.search(r"sizeof=(\d+).*?align=(\d+)", ln)
                if sm:
                    out.size, out.align = int(sm.group(1)), int(sm.group(2))
                continue
            body = m.group(2)[1:]
            depth = (len(body) - len(body.lstrip(" "))) // 2
            parsed.append((int(m.group(1)), depth, body.strip()))
        vptrs: set[int] = set()
        for i, (offset, depth, body) in enumerate(parsed):
            while stack and stack[-1][0] >= depth:
                stack.pop()
            if body.endswith("vtable pointer)"):
                vptrs.add(offset)
                continue
            bm = _BASE.match(body)
            if bm and (not stack or stack[-1][0] == depth - 1) and \
                    (depth == 1 or stack):
                virtual = bm.group(2) == "virtual base" or (bool(stack) and stack[-1][1])
                out.subobjects.append(Subobject(normalize_type_name(bm.group(1)), offset,
                                                virtual, depth))
                stack.append((depth, virtual))
                # A dynamic base whose vtable pointer the dump leaves out (its primary base is
                # a virtual base laid out elsewhere): its first member starts after it.
                nxt = parsed[i + 1] if i + 1 < len(parsed) else None
                if not bm.group(3) and (nxt is None or nxt[1] <= depth or nxt[0] > offset):
                    vptrs.add(offset)
        out.vptrs = len(vptrs)
        return out
    return None


def dump_target(path: str, args: Sequence[str], target: str,
                unsaved_text: bytes | None = None) -> TargetLayout | None:
    """Run clang's record-layout dump on the unit `path` and read the target's block.

    Returns None when clang is not available or the dump fails (the caller then falls back
    to the order in which C++ constructs the bases).
    """
    compiler = clang_compiler()
    if compiler is None:
        return None
    lang = language_args(path, args)
    if unsaved_text is not None:
        cmd = [compiler, "-fsyntax-only", "-w", "-ferror-limit=0", "-Xclang",
               "-fdump-record-layouts-complete", *lang, "-"]
        proc = subprocess.run(cmd, input=unsaved_text, capture_output=True, check=False)
    else:
        cmd = [compiler, "-fsyntax-only", "-w", "-ferror-limit=0", "-Xclang",
               "-fdump-record-layouts-complete", *lang, path]
        proc = subprocess.run(cmd, capture_output=True, check=False)
    # errors inside system headers (a preprocessed file from g++) do not stop the layout of
    # the user's classes: read the block if it is there
    return parse_target_block(proc.stdout.decode(errors="replace"), target)
