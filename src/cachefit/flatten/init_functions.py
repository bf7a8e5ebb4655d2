"""Step 4 of flattening (paper 001 §3): base constructors and destructors become functions.

A user-provided base constructor becomes `void <base>_ctor(params)` (its base initializers
become calls, its member initializers assignments, then its body); a destructor becomes
`<base>_dtor()`. This module decides which of them do something (`init_is_empty`, shared
between units through `Facts`), names them, writes their text, and computes the calls in the
order C++ runs them (`prologue`, `epilogue`). Editing the target's own constructors is
`target_ctors`.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from cachefit.edits import Edit, apply_to_slice
from cachefit.flatten import cx
from cachefit.flatten.ctor_defs import CtorDef, Item, ctor_def
from cachefit.flatten.cx import CK
from cachefit.flatten.model import ClassInfo, Member
from cachefit.flatten.places import ctx_for, definition_of, kept_visible, unique_name
from cachefit.flatten.problems import Unsupported
from cachefit.flatten.rename_refs import region_edits
from cachefit.flatten.state import Ctx, FlatState


@dataclass
class Call:
    """A call of an init function that replaces a base constructor or destructor."""

    member: Member                  # the base constructor/destructor
    item: Item | None               # its mem-initializer (arguments), if any
    ctx: Ctx | None                 # context of the item's code


def user_ctor(m: Member | None) -> bool:
    return m is not None and m.kind in ("ctor", "dtor") and not m.defaulted \
        and not m.deleted


def default_ctor(c: ClassInfo) -> Member | None:
    for m in c.members:
        if m.kind == "ctor" and m.cursor.is_default_constructor():
            return m
    return None


def dtor_of(c: ClassInfo) -> Member | None:
    return next((m for m in c.members if m.kind == "dtor"), None)


def construct_calls(st: FlatState, b: ClassInfo, item: Item | None, ctx: Ctx | None) -> list[Call]:
    """Calls that construct the non-virtual part of subobject `b` (its virtual bases are
    constructed by the most derived class)."""
    chosen: Member | None = None
    if item is not None and item.ctor is not None:
        chosen = st.h.member_of(item.ctor)
    elif item is None or not item.args:
        chosen = default_ctor(b)
    if chosen is not None and user_ctor(chosen):
        return [Call(chosen, item, ctx)] if not init_is_empty(st, chosen) else []
    if item is not None and item.args:
        raise Unsupported(f"{b.key} is initialized from an argument by its implicit "
                          "(copy) constructor",
                          "initialize the base with a user-provided constructor",
                          _item_loc(st, item), code="unsupported-base-copy")
    out: list[Call] = []
    for e in b.bases:
        if not e.virtual:
            out += construct_calls(st, e.cls, None, None)
    return out


def _item_loc(st: FlatState, item: Item):
    for cd in st.ctor_cache.values():
        if cd is not None and item in cd.items:
            tu = st.src.tu
            loc = ci.SourceLocation.from_offset(tu, tu.get_file(cd.file), item.start)
            return cx.presumed(loc)
    return None


def init_is_empty(st: FlatState, k: Member) -> bool:
    """Whether the init function of base constructor/destructor `k` would do nothing
    (decided where its definition is; other units learn it through the seeds)."""
    if k.key in st.empty_cache:
        return st.empty_cache[k.key]
    st.empty_cache[k.key] = False
    d = definition_of(st, k)
    if d is None:
        empty = st.seeds.empty.get(k.key, False)
        st.empty_cache[k.key] = empty
        return empty
    cd = ctor_def(st, d) if k.kind == "ctor" else None
    body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
    body_empty = body is None or not list(body.get_children())
    empty = False
    if k.kind == "dtor":
        empty = body_empty
    elif cd is not None and body_empty and not any(i.kind == "member" for i in cd.items):
        calls = []
        for e in k.cls.bases:
            if not e.virtual:
                it = next((i for i in cd.items if i.cls is e.cls), None)
                calls += construct_calls(st, e.cls, it, None)
        empty = not calls
    st.empty_cache[k.key] = empty
    st.empty_known[k.key] = empty
    return empty


def prologue(st: FlatState, cd: CtorDef | None) -> list[Call]:
    """The init-function calls that replace the base construction of a target ctor."""
    items = cd.items if cd is not None else []
    if any(i.kind == "delegate" for i in items):
        return []
    ctx = Ctx(st.target, None, (), st.target.name) if cd is None else \
        ctx_for(st, st.h.member_of(cd.cursor) or dummy_member(st, cd.cursor),
                cd.cursor, False)
    calls: list[Call] = []
    for v in st.h.vbase_order:
        it = next((i for i in items if i.kind == "base" and i.cls is v), None)
        calls += construct_calls(st, v, it, ctx)
    for e in st.target.bases:
        if not e.virtual:
            it = next((i for i in items if i.kind == "base" and i.cls is e.cls), None)
            calls += construct_calls(st, e.cls, it, ctx)
    return calls


def dummy_member(st: FlatState, cursor: ci.Cursor) -> Member:
    return Member(st.target, cursor, "ctor", st.target.name, [], "public")


def destroy_calls(st: FlatState, b: ClassInfo) -> list[Member]:
    out: list[Member] = []
    d = dtor_of(b)
    if d is not None and user_ctor(d) and not init_is_empty(st, d):
        out.append(d)
    for e in reversed(b.bases):
        if not e.virtual:
            out += destroy_calls(st, e.cls)
    return out


def epilogue(st: FlatState) -> list[Member]:
    out: list[Member] = []
    for e in reversed(st.target.bases):
        if not e.virtual:
            out += destroy_calls(st, e.cls)
    for v in reversed(st.h.vbase_order):
        out += destroy_calls(st, v)
    return out


def init_name(st: FlatState, k: Member) -> str:
    if k.key not in st.init_names:
        suffix = "ctor" if k.kind == "ctor" else "dtor"
        same = next((n for kk, n in st.init_names.items()
                     if st.h.members[kk].cls is k.cls
                     and st.h.members[kk].kind == k.kind), None)
        st.init_names[k.key] = same or unique_name(st, f"{k.cls.name}_{suffix}")
    return st.init_names[k.key]


def call_text(st: FlatState, call: Call) -> str:
    name = init_name(st, call.member)
    if call.member.kind == "dtor":
        return f"{name}();"
    args = ""
    if call.item is not None and call.item.args:
        cd_cursor = _item_region(st, call)
        edits = region_edits(st, cd_cursor, call.ctx) if call.ctx else []
        f = _item_file(st, call)
        s, e = call.item.inner
        args = apply_to_slice(st.src.data(f), s, e, edits).strip()
    return f"{name}({args});"


def _item_region(st: FlatState, call: Call) -> ci.Cursor:
    for cd in st.ctor_cache.values():
        if cd is not None and call.item in cd.items:
            return cd.cursor
    raise AssertionError("mem-initializer without its constructor")


def _item_file(st: FlatState, call: Call) -> str:
    for cd in st.ctor_cache.values():
        if cd is not None and call.item in cd.items:
            return cd.file
    raise AssertionError("mem-initializer without its constructor")


def assignment(st: FlatState, item: Item, edits: list[Edit], f: str) -> str | None:
    """A statement that does what the mem-initializer `item` did, after the fact."""
    fm = item.field
    if fm is None:
        return None
    data = st.src.data(f)
    name = fm.name
    ftype = fm.cursor.type
    canon = ftype.get_canonical()
    where = cx.presumed(fm.cursor)
    if canon.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        raise Unsupported(f"reference member {fm.qualified} is initialized by a base "
                          "constructor", "make it a pointer", where,
                          code="unsupported-member-init")
    if canon.is_const_qualified():
        raise Unsupported(f"const member {fm.qualified} is initialized by a base "
                          "constructor", "drop const, or give it a default member "
                          "initializer", where, code="unsupported-member-init")
    inner = apply_to_slice(data, item.inner[0], item.inner[1], edits).strip()
    if canon.kind == ci.TypeKind.CONSTANTARRAY:
        if canon.element_type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY:
            raise Unsupported(f"multi-dimensional array member {fm.qualified} is "
                              "initialized by a base constructor",
                              "give it a default member initializer", where,
                              code="unsupported-member-init")
        if not inner:
            return f"for (auto& cachefit_e : {name}) cachefit_e = {{}};"
        return (f"{{ const decltype({name}) cachefit_v{{{inner}}}; "
                f"for (decltype(sizeof 0) cachefit_i = 0; "
                f"cachefit_i != sizeof {name} / sizeof {name}[0]; ++cachefit_i) "
                f"{name}[cachefit_i] = cachefit_v[cachefit_i]; }}")
    if item.open == "(":
        if len(item.args) == 1:
            return f"{name} = {inner};"
        return f"{name} = decltype({name})({inner});"
    return f"{name} = decltype({name}){{{inner}}};"


def _format_body(head: list[str], inner: str, indent: str) -> str:
    """The text of a new function body: `head` statements, then the original `inner`."""
    ind = indent + "    "
    stmts = inner.strip()
    if not head and "\n" not in inner:
        return "{" + (f" {stmts} " if stmts else "") + "}"
    out = ["{\n"]
    out += [f"{ind}{ln}\n" for ln in head]
    if stmts:
        if "\n" in inner:
            body = inner.lstrip(" \t")
            body = body[1:] if body.startswith("\n") else ind + body
            body = body.rstrip(" \t")
            out.append(body if body.endswith("\n") else body + "\n")
        else:
            out.append(f"{ind}{stmts}\n")
    out.append(indent + "}")
    return "".join(out)


def is_constexpr(st: FlatState, d: ci.Cursor) -> bool:
    name_off = d.location.offset
    return any(t.spelling == "constexpr" and t.begin < name_off
               for t in st.src.cursor_tokens(d))


def init_text(st: FlatState, k: Member, indent: str) -> str:
    """The init function replacing base constructor/destructor `k` (a declaration when
    `k` is defined out of line)."""
    d = definition_of(st, k)
    if d is None or d is not k.cursor:
        return _init_decl(st, k)
    return init_def(st, k, d, "", in_class=True, indent=indent)


def _init_decl(st: FlatState, k: Member) -> str:
    name = init_name(st, k)
    if k.kind == "dtor":
        return f"void {name}();"
    cd = ctor_def(st, k.cursor)
    ctx = ctx_for(st, k, k.cursor, True, ctor=True)
    edits = region_edits(st, k.cursor, ctx)
    f = cx.file_of(k.cursor)
    params = apply_to_slice(st.src.data(f), cd.lparen.end, cd.rparen.begin, edits)
    exc = apply_to_slice(st.src.data(f), cd.rparen.end, cd.head_end, edits)
    pre = "constexpr " if is_constexpr(st, k.cursor) else ""
    return f"{pre}void {name}({params}){exc};"


def init_def(st: FlatState, k: Member, d: ci.Cursor, qual: str, in_class: bool,
             indent: str = "") -> str:
    name = init_name(st, k)
    f = cx.file_of(d)
    data = st.src.data(f)
    ctx = ctx_for(st, k, d, in_class, ctor=True)
    edits = region_edits(st, d, ctx)
    body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
    bs, be = cx.span(body) if body is not None else (0, 0)
    inner = apply_to_slice(data, bs + 1, be - 1, edits) if body is not None else ""
    pre = "constexpr " if is_constexpr(st, d) else ""
    if k.kind == "dtor":
        return f"{pre}void {qual}{name}() " + _format_body([], inner, indent)
    cd = ctor_def(st, d)
    params = apply_to_slice(data, cd.lparen.end, cd.rparen.begin, edits)
    exc = apply_to_slice(data, cd.rparen.end, cd.head_end, edits)
    lines: list[str] = []
    for e in k.cls.bases:
        if e.virtual:
            continue
        it = next((i for i in cd.items if i.kind == "base" and i.cls is e.cls), None)
        lines += [call_text(st, c) for c in construct_calls(st, e.cls, it, ctx)]
    members = [i for i in cd.items if i.kind == "member" and i.field is not None
               and kept_visible(st, i.field)]
    members.sort(key=lambda i: i.field.unit[0])
    for i in members:
        text = assignment(st, i, edits, f)
        if text:
            lines.append(text)
    return f"{pre}void {qual}{name}({params}){exc} " + \
        _format_body(lines, inner, indent)
