"""The parts of a constructor or destructor definition, read from its tokens.

`ctor_def` finds the parameter list, the mem-initializers (each classified as a base, a member
or a delegating initializer, with its arguments), the body and a `= default`. Step 4
(`init_functions`, `target_ctors`) uses these parts; nothing here writes an edit.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.cx import CK
from cachefit.flatten.model import ClassInfo, Member
from cachefit.flatten.problems import Unsupported
from cachefit.flatten.state import FlatState
from cachefit.frontend.source_text import Tok


@dataclass
class Item:
    """One mem-initializer of a constructor definition."""

    kind: str                      # base, member, delegate
    start: int
    end: int
    open: str                      # ( or {
    inner: tuple[int, int]         # bytes between the brackets
    args: list[tuple[int, int]]    # top-level arguments
    cls: ClassInfo | None = None
    field: Member | None = None
    ctor: ci.Cursor | None = None  # the constructor it calls, when the AST says


@dataclass
class CtorDef:
    """The parts of a constructor (or destructor) definition."""

    cursor: ci.Cursor
    file: str
    name: Tok
    lparen: Tok
    rparen: Tok
    colon: Tok | None
    items: list[Item]
    body: ci.Cursor | None          # the compound statement
    default_range: tuple[int, int] | None   # '= default' tokens
    head_end: int                   # end of the exception specification etc.


def ctor_def(st: FlatState, d: ci.Cursor | None) -> CtorDef | None:
    if d is None:
        return None
    key = cx.loc_key(d)
    if key in st.ctor_cache:
        return st.ctor_cache[key]
    f = cx.file_of(d)
    toks = st.src.cursor_tokens(d)
    name_off = d.location.offset
    i = next((k for k, t in enumerate(toks) if t.begin >= name_off and t.spelling == "("),
             None)
    if i is None:
        st.ctor_cache[key] = None
        return None
    j = cx.matching(toks, i)
    body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
    body_start = cx.span(body)[0] if body is not None else toks[-1].end
    colon = None
    default_range = None
    head_end = toks[j].end
    k = j + 1
    depth = 0
    while k < len(toks) and toks[k].begin < body_start:
        t = toks[k]
        if t.spelling in ("(", "[", "{"):
            depth += 1
        elif t.spelling in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and t.spelling == ":":
            colon = t
            break
        elif depth == 0 and t.spelling == "try":
            raise Unsupported("a constructor with a function-try-block",
                              "move the try block into the constructor body",
                              cx.presumed(d), code="unsupported-try-block")
        elif depth == 0 and t.spelling == "=" and k + 1 < len(toks) and \
                toks[k + 1].spelling in ("default", "delete"):
            default_range = (t.begin, toks[k + 1].end)
            break
        head_end = t.end
        k += 1
    items: list[Item] = []
    if colon is not None:
        ctoks = [t for t in toks if colon.end <= t.begin < body_start]
        kids = list(d.get_children())
        for part in cx.split_top_level(ctoks):
            if not part:
                continue
            items.append(_item(st, d, f, part, kids))
    ctor = CtorDef(d, f, toks[i - 1] if i > 0 else toks[0], toks[i], toks[j], colon,
                   items, body, default_range, head_end)
    st.ctor_cache[key] = ctor
    return ctor


def _item(st: FlatState, d: ci.Cursor, f: str, part: list[Tok], kids: list[ci.Cursor]) -> Item:
    b = next((x for x, t in enumerate(part) if t.spelling in ("(", "{")), None)
    if b is None:
        raise Unsupported("a mem-initializer without parentheses or braces",
                          "simplify the constructor", cx.presumed(d))
    close = cx.matching(part, b)
    start, end = part[0].begin, part[close].end
    inner = (part[b].end, part[close].begin)
    args = [(p[0].begin, p[-1].end) for p in cx.split_top_level(part[b + 1:close]) if p]
    item = Item("member", start, end, part[b].spelling, inner, args)
    name_end = part[b].begin
    for c in kids:
        cs = cx.span(c)[0]
        if not (start <= cs < name_end):
            if c.kind == CK.CALL_EXPR and cs == start and item.ctor is None:
                item.ctor = c.referenced
            continue
        if c.kind == CK.MEMBER_REF:
            item.field = st.h.member_of(c.referenced)
            item.kind = "member"
        elif c.kind in (CK.TYPE_REF, CK.TEMPLATE_REF):
            cls = None
            if c.kind == CK.TYPE_REF:
                r = c.referenced
                cls = st.h.classes.get(cx.record_key(c.type) or "") or \
                    st.h.by_loc.get(cx.loc_key(r) if r is not None else None)
            else:
                r = c.referenced
                cls = st.template_classes.get(cx.key_of(r) if r is not None else None)
            if cls is not None:
                item.cls = cls
                item.kind = "base"
        elif c.kind == CK.CALL_EXPR and cs == start:
            item.ctor = c.referenced
    if item.kind == "base" and item.cls is not None and \
            _owner(st, d) is item.cls:
        item.kind = "delegate"
    return item


def _owner(st: FlatState, d: ci.Cursor) -> ClassInfo | None:
    m = st.h.member_of(d)
    return m.cls if m is not None else None
