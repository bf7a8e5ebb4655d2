"""Member offsets that reach assembly, and offsets the code asserts.

* An inline `asm` statement with an operand computed from an offset of the record
  (`"i"(offsetof(struct tcb, state))`) is refused: assembly may assume neighbours of that
  member; it should use one symbol per member from the offsets header (`--offsets-header`).
  The asm-offsets idiom (`asm("\n#define OFS_TCB_STATE %0" :: "i"(offsetof(...)))`, whose
  assembly output a build step turns into a header of one symbol per member) is accepted:
  the symbols follow the layout the unit is compiled with. The template is read from the
  statement's tokens, so the idiom is recognised in preprocessed units (the build-time mode)
  and when written out; behind unexpanded macros it stays refused.
* `static_assert(offsetof(T, m) == K)` pins `m`. When K is a macro defined in a header that
  an assembly file (`.S`) includes, the offset is hard-coded for assembly: refused, unless
  that header is the generated offsets header.

The list of headers assembly files include comes from the compiler (`-M`). Reads only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence

import clang.cindex as ci

from cachefit.frontend.clang_util import CK, children, kind_of, location
from cachefit.reorder.constraints import OrderConstraint, Refusal
from cachefit.reorder.offset_forms import OffsetEvaluator

ASM_SUFFIXES = (".S", ".sx")


def _uses_record_offset(c: ci.Cursor, ev: OffsetEvaluator) -> str | None:
    stack = [c]
    while stack:
        cur = stack.pop()
        if kind_of(cur) == CK.UNEXPOSED_EXPR:
            m = ev.offsetof_member(cur)
            if m is not None:
                return m[0]
        if kind_of(cur) == CK.CXX_UNARY_EXPR:
            form = ev.int_form(cur)
            if form is not None and form.symbolic:
                return form.terms[0][0][1] or "sizeof"
        stack.extend(children(cur))
    return None


# The asm-offsets idiom: the template only publishes its operand under a name in the
# compiler's assembly output (`"\n#define OFS_TCB_STATE %0"`, Linux's `"\n.ascii \"->NAME
# %0"`), which a build step turns into a header: one symbol per member, as --offsets-header.
_PUBLISH = re.compile(r'^\s*(?:#define\s+\w+\s+%c?\d+|\.ascii\s+"->\w+\s+%c?\d+(?:\s[^"]*)?")\s*$')


def _template(stmt: ci.Cursor) -> str | None:
    """The asm template (its string literals before the first `:`), escapes decoded."""
    parts: list[str] = []
    seen_paren = False
    for tok in stmt.get_tokens():
        if tok.spelling == "(" and not seen_paren:
            seen_paren = True
        elif seen_paren and tok.kind == ci.TokenKind.LITERAL and tok.spelling.startswith('"'):
            parts.append(tok.spelling[1:-1])
        elif seen_paren:
            break
    if not parts:
        return None
    return "".join(parts).replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')


def _bare_offsetof(c: ci.Cursor, ev: OffsetEvaluator) -> bool:
    """Whether the operand is `offsetof(T, m...)` itself (no arithmetic around it)."""
    while ev.offsetof_member(c) is None:
        kids = children(c)
        if kind_of(c) not in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) or len(kids) != 1:
            return False
        c = kids[0]
    return True


def publishes_offset(stmt: ci.Cursor, ev: OffsetEvaluator) -> bool:
    """Whether the asm statement is the asm-offsets idiom (see `_PUBLISH`): its template
    names its one operand, and that operand is a bare offsetof."""
    text = _template(stmt)
    operands = children(stmt)
    return text is not None and bool(_PUBLISH.match(text.strip("\n\t "))) and \
        len(operands) == 1 and _bare_offsetof(operands[0], ev)


def asm_refusal(stmt: ci.Cursor, ev: OffsetEvaluator, record_name: str) -> Refusal | None:
    """A refusal for an inline asm statement fed with an offset of the record (not for the
    asm-offsets idiom, which publishes one member's offset under its own name)."""
    member = _uses_record_offset(stmt, ev)
    if member is None or publishes_offset(stmt, ev):
        return None
    return Refusal(
        f"inline assembly takes the offset of {record_name}.{member} as an operand; "
        "assembly may rely on the members around it",
        "give assembly one symbol per member from the generated offsets header "
        "(--offsets-header) and use only those", location(stmt))


Macro = tuple[str, str, str, int, int]


def _macro_in(macros: list[Macro], side: ci.SourceRange) -> tuple[str, str] | None:
    """The macro expanded where `side` is written, as (name, defining file)."""
    if side.start.file is None:
        return None
    f, b, e = side.start.file.name, side.start.offset, max(side.end.offset,
                                                           side.start.offset + 1)
    for name, def_file, exp_file, mb, me in macros:
        if exp_file == f and (b <= mb < e or mb <= b < me):
            return name, def_file
    return None


def static_assert_pin(stmt: ci.Cursor, ev: OffsetEvaluator, record_name: str,
                      macros: list[Macro], asm_headers: set[str],
                      offsets_header: str | None, cond: ci.Cursor | None = None
                      ) -> tuple[OrderConstraint | None, Refusal | None]:
    """For `static_assert(offsetof(T, m) == K)`: a pin on m, or a refusal (see module doc).
    `cond` replaces the assertion's condition: the size of an array whose declaration is
    the pre-C11 form (`int check[1 - 2 * !(offsetof(T, m) == K)]`, libuv's STATIC_ASSERT).

    `macros` are (name, defining file, expansion file, begin, end) of the unit's macro
    expansions.
    """
    if cond is None:
        kids = children(stmt)
        if not kids:
            return None, None
        cond = kids[0]
    stack = [cond]
    while stack:
        cur = stack.pop()
        if kind_of(cur) == CK.BINARY_OPERATOR and cur.spelling in ("==", "!="):
            sides = children(cur)
            if len(sides) == 2:
                forms = [ev.int_form(s) for s in sides]
                for i in (0, 1):
                    f, g = forms[i], forms[1 - i]
                    sym = f.single() if f is not None else None
                    if sym is None or sym[0] != "start" or g is None or g.symbolic:
                        continue
                    loc = location(stmt)
                    other = sides[1 - i].extent
                    hit = _macro_in(macros, other) if asm_headers else None
                    if hit is not None and hit[1] in asm_headers and hit[1] != offsets_header:
                        return None, Refusal(
                            f"the offset of {record_name}.{sym[1]} is hard-coded in "
                            f"macro {hit[0]} ({hit[1]}), which assembly includes",
                            "generate the offsets with --offsets-header and include "
                            "that header from the assembly instead", loc)
                    return OrderConstraint("pin", (sym[1],),
                                           f"a static_assert checks its offset ({g.const})",
                                           loc), None
        stack.extend(children(cur))
    return None, None


def asm_included_headers(units: Sequence[tuple[str, list[str]]]) -> set[str]:
    """Absolute paths of every header an assembly unit (`.S`) includes, per the compiler."""
    out: set[str] = set()
    cc = shutil.which("gcc") or shutil.which("cc") or shutil.which("clang-19")
    if cc is None:
        return out
    for path, args in units:
        if not path.endswith(ASM_SUFFIXES):
            continue
        keep = [a for a in args if a.startswith(("-I", "-D", "-U", "-include", "-isystem"))]
        proc = subprocess.run([cc, "-M", "-x", "assembler-with-cpp", *keep, path],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            continue
        words = proc.stdout.replace("\\\n", " ").split()
        for w in words[1:]:
            if not w.endswith(":") and w != path:
                out.add(os.path.abspath(w))
    return out
