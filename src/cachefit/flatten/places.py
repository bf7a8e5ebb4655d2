"""Names and places shared by the flattening steps.

How code at a given place spells the target, where definitions moved behind the target go,
which members the flat class keeps visible, which base classes are removed, where a name's
qualifier starts and its name ends, and two text edits every step needs: deleting whole
lines and adding an `#include` of the target's header. It decides nothing about members.
"""

from __future__ import annotations

import os
import re

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.cx import CK
from cachefit.flatten.model import ClassInfo, Member
from cachefit.flatten.problems import Unsupported
from cachefit.flatten.state import Ctx, FlatState


def t_spell_at(st: FlatState, cursor: ci.Cursor) -> str:
    """The target's name as code at namespace scope around `cursor` must write it."""
    ns = cx.namespaces(cursor, semantic=False)
    if ns[:len(st.t_namespaces)] == st.t_namespaces:
        return st.t_ns_spell
    return "::" + st.t_qualified


def unique_name(st: FlatState, base: str) -> str:
    """A new member name from `base` that no declaration of the hierarchy uses.

    Deterministic: the same base always gives the same name, whatever else was
    generated, so that every unit of a build generates the same names."""
    name = base
    i = 2
    while name in st.hier_names:
        name = f"{base}{i}"
        i += 1
    return name


def ctx_for(st: FlatState, m: Member, region: ci.Cursor, in_class: bool,
            ctor: bool = False) -> Ctx:
    if region is m.cursor or in_class:
        params = tuple(cx.loc_key(p) for p in m.cls.params)
        spell = st.target.name
    else:
        own = [c for c in region.get_children() if c.kind in cx.TEMPLATE_PARAM_KINDS]
        params = tuple(cx.loc_key(p) for p in own[:len(m.cls.params)])
        spell = t_spell_at(st, region)
    return Ctx(m.cls, m.cls if ctor and not m.cls.is_target else None, params, spell)


def kept_visible(st: FlatState, m: Member) -> bool:
    if m.cls.is_target:
        return True
    return m in st.copied and all(st.visible.get(n) is m.cls for n in m.names)


def qualifier_start(st: FlatState, f: str, start: int) -> int:
    """Extend `start` back over a nested-name-specifier (ns:: or ::) written before it."""
    while True:
        prev = st.src.prev_token(f, start, 256)
        if prev is None or prev.spelling != "::":
            return start
        before = st.src.prev_token(f, prev.begin, 256)
        if before is not None and before.kind == "IDENTIFIER":
            start = before.begin
        else:
            return prev.begin


def name_end(st: FlatState, f: str, start: int, where: ci.Cursor) -> int:
    toks = st.src.tokens(f, start, start + 64)
    if not toks:
        return start
    if toks[0].spelling != "operator":
        return toks[0].end
    if len(toks) > 2 and toks[1].spelling in ("(", "[") and toks[2].spelling in (")", "]"):
        return toks[2].end
    if len(toks) > 1 and toks[1].is_punct:
        return toks[1].end
    raise Unsupported("a qualified call of a hidden conversion or allocation operator",
                      "call it through a named member function", cx.presumed(where))


def definition_of(st: FlatState, m: Member) -> ci.Cursor | None:
    if m.has_inline_body or m.defaulted or m.deleted:
        return m.cursor
    for d in m.defs:
        if any(c.kind == CK.COMPOUND_STMT for c in d.get_children()):
            return d
        toks = st.src.cursor_tokens(d)
        if any(t.spelling == "default" for t in toks):
            return d
    return None


def indent(cursor: ci.Cursor) -> str:
    return " " * max(cursor.extent.start.column - 1, 0)


def class_removed(st: FlatState, c: ClassInfo) -> bool:
    if c.is_target or c.key in st.outside.used_elsewhere:
        return False
    if c.template is not None and cx.key_of(c.template) in \
            st.outside.templates_used_elsewhere:
        return False
    return True


def t_end(st: FlatState) -> int:
    """Where definitions moved behind the target go: after its definition, or after the
    outermost class its definition is written in (`struct Outer { struct T {...}; };`)."""
    outer = st.target.decl
    while outer.lexical_parent is not None and \
            outer.lexical_parent.kind in cx.RECORD_KINDS:
        outer = outer.lexical_parent
    e = cx.span(outer)[1]
    nxt = st.src.next_token(st.t_file, e, 64)
    return nxt.end if nxt is not None and nxt.spelling == ";" else e


def delete_line_range(st: FlatState, f: str, s: int, e: int, comments: bool = False) -> None:
    """Delete bytes [s, e) with the rest of their lines, the comment lines right above
    (when `comments`), and one of two blank lines the deletion would leave."""
    data = st.src.data(f)
    while e < len(data) and data[e:e + 1] in (b" ", b"\t"):
        e += 1
    if data[e:e + 1] == b"\n":
        e += 1
    line_start = data.rfind(b"\n", 0, s) + 1
    if not data[line_start:s].strip():
        s = line_start
        while comments and s > 0:
            prev_start = data.rfind(b"\n", 0, s - 1) + 1
            line = data[prev_start:s].strip()
            if not line.startswith(b"//"):
                break
            s = prev_start
        if s >= 2 and data[s - 2:s] == b"\n\n" and data[e:e + 1] == b"\n":
            e += 1
    st.edits.delete(f, s, e, "remove definition")


def ensure_include(st: FlatState, f: str) -> None:
    """Add an #include of the target's header to a source file that did not see it:
    after the last #include line at the top of the file (or at its start)."""
    if f in st.included:
        return
    st.included.add(f)
    for inc in st.src.tu.get_includes():
        if inc.source is not None and cx.norm_path(inc.source.name) == f and \
                inc.include is not None and \
                cx.norm_path(inc.include.name) == st.include_target:
            return
    data = st.src.data(f)
    at = 0
    pos = 0
    for line in data.splitlines(keepends=True):
        stripped = line.strip()
        if re.match(rb"#\s*include\b", stripped):
            at = pos + len(line)
        elif stripped and not stripped.startswith((b"//", b"#", b"/*", b"*")):
            break
        pos += len(line)
    rel = os.path.relpath(st.include_target, os.path.dirname(f))
    st.edits.insert(f, at, f'#include "{rel}"\n', "include the target")
