"""Step 3 of flattening (paper 001 §3): rename base types in hierarchy code.

`region_edits` walks one piece of hierarchy code (a member, an out-of-line definition) and
returns its local edits: classes of the hierarchy and template-ids of template bases become
the target, template parameters of template bases become their arguments, `override`/`final`
go, and calls that must reach a version the flat class no longer has under its name go to a
renamed copy (`rename`). It also renames `base::name` outside the hierarchy
(`rename_static_refs`) and refuses uses of hidden members. Classes nested in another class
are `enclosing_scope`'s. It does not decide which members are kept (`select_members`).
"""

from __future__ import annotations

import re

import clang.cindex as ci

from cachefit.edits import Edit, drop_contained
from cachefit.flatten import cx
from cachefit.flatten.cx import CK, Key
from cachefit.flatten.enclosing_scope import (
    SCOPE_REF_KINDS,
    enclosing_keys,
    enclosing_ref,
    hijacked,
    t_scope_names,
)
from cachefit.flatten.model import ClassInfo, Member
from cachefit.flatten.places import (
    class_removed,
    ensure_include,
    kept_visible,
    name_end,
    qualifier_start,
    t_spell_at,
    unique_name,
)
from cachefit.flatten.problems import PreconditionFailed, Unsupported
from cachefit.flatten.state import Ctx, FlatState
from cachefit.model.type_names import unqualified_type_key

_OPERATOR_WORDS = {
    "==": "eq", "!=": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "+": "plus",
    "-": "minus", "*": "mul", "/": "div", "%": "mod", "+=": "plus_assign",
    "-=": "minus_assign", "*=": "mul_assign", "/=": "div_assign", "()": "call",
    "[]": "index", "!": "not", "~": "compl", "&": "and", "|": "or", "^": "xor",
    "<<": "shl", ">>": "shr", "++": "inc", "--": "dec", "->": "arrow", "<=>": "cmp",
}


def rename_static_refs(st: FlatState) -> None:
    """`base::name` outside the hierarchy, naming a static member, nested type or
    enumerator of a base: the flat class has the same member, so where the base goes away
    the qualifier becomes the target. The member must be the one lookup in the target finds,
    and public there."""
    for n, c, named in st.outside.static_refs:
        m = st.h.member_of(named)
        if m is None and named.kind == CK.ENUM_CONSTANT_DECL:
            m = st.h.member_of(named.semantic_parent)
        if not class_removed(st, c):
            continue
        if m is None or not kept_visible(st, m) or \
                st.h.effective_access(m) != "public":
            why = "hidden in" if m is not None and not kept_visible(st, m) else \
                "not a public member of"
            raise PreconditionFailed(
                2, "base-named",
                f"base class {c.key} of {st.target.key} is named outside the hierarchy "
                f"({c.key}::{named.spelling}, which is {why} the flat {st.target.key})",
                f"refer to the member through {st.target.key}, or rename it", cx.presumed(n))
        f = cx.file_of(n)
        s, e = cx.span(n)
        text = st.src.text(f, s, e)
        if text != c.name:
            raise Unsupported(f"{c.key} is named through a macro or typedef ('{text}')",
                              "write the class name, or flatten the preprocessed file",
                              cx.presumed(n), code="unsupported-macro")
        q = qualifier_start(st, f, s)
        spell = t_spell_at(st, n) if q == s else "::" + st.t_qualified
        st.edits.replace(f, q, e, spell, f"{c.key}::{named.spelling} -> target")
        if st.include_target and f == st.main_file:
            ensure_include(st, f)


def region_edits(st: FlatState, region: ci.Cursor, ctx: Ctx) -> list[Edit]:
    key = (cx.loc_key(region), ctx.ctor_of is not None)
    if key not in st.region_cache:
        st.region_cache[key] = _compute_region_edits(st, region, ctx)
    return st.region_cache[key]


def _compute_region_edits(st: FlatState, region: ci.Cursor, ctx: Ctx) -> list[Edit]:
    f = cx.file_of(region)
    rs, re_ = cx.span(region)
    edits: list[Edit] = []
    params = {k: ctx.cls.args[i] for i, k in enumerate(ctx.params)
              if k is not None and i < len(ctx.cls.args)}
    for n, parents in cx.walk_with_parents(region):
        nf = cx.file_of(n)
        if nf != f:
            continue
        s, e = cx.span(n)
        if s < rs or e > re_:
            continue
        k = n.kind
        if k == CK.TYPE_REF:
            _type_ref(st, n, ctx, params, edits)
        elif k == CK.TEMPLATE_REF:
            _template_ref(st, n, ctx, params, edits, re_)
        elif k == CK.DECL_REF_EXPR and n.referenced is not None and \
                n.referenced.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
            arg = params.get(cx.loc_key(n.referenced))
            if arg is not None:
                edits.append(Edit(f, s, e, _paren(arg), "template argument"))
        if not ctx.cls.is_target and enclosing_keys(st, ctx.cls) and \
                k in SCOPE_REF_KINDS:
            enclosing_ref(st, n, parents, region, ctx, edits)
        if not ctx.cls.is_target and t_scope_names(st) and \
                k in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR,
                      CK.OVERLOADED_DECL_REF):
            hijacked(st, n, ctx)
        if k in (CK.MEMBER_REF_EXPR, CK.DECL_REF_EXPR, CK.MEMBER_REF):
            _member_ref(st, n, ctx, edits)
        elif k in (CK.CXX_OVERRIDE_ATTR, CK.CXX_FINAL_ATTR) and parents and \
                parents[-1] == region:
            prev = st.src.prev_token(f, s)
            edits.append(Edit(f, prev.end if prev else s, e, "", "drop override/final"))
        elif k == CK.CXX_THIS_EXPR and not ctx.cls.is_target:
            _this_escape(st, n, parents, ctx)
        elif k == CK.VAR_DECL:
            inner, indirect = cx.strip_type(n.type)
            c = st.h.classes.get(cx.record_key(inner) or "")
            if c is not None and not c.is_target and not indirect:
                raise PreconditionFailed(
                    2, "base-instance",
                    f"variable '{n.spelling}' is an instance of base class {c.key} "
                    f"inside the hierarchy of {st.target.key}",
                    f"instantiate only {st.target.key}", cx.presumed(n))
    return drop_contained(edits)


def _this_escape(st: FlatState, n: ci.Cursor, parents: tuple[ci.Cursor, ...], ctx: Ctx) -> None:
    """Warn when base-class code converts `this` to a type outside the hierarchy (say
    const void*): it was the address of the base subobject, it becomes the object's."""
    if not parents or parents[-1].kind != CK.UNEXPOSED_EXPR:
        return
    c, _ = cx.strip_type(parents[-1].type)
    if cx.record_key(c) in st.h.classes:
        return
    offset = st.layout.order_key(ctx.cls.key) if st.layout else None
    if offset is not None and offset[1] == 0 and offset[0] == 0:
        return
    where = cx.presumed(n)
    msg = (f"{where}: code of {ctx.cls.key} converts 'this' to "
           f"'{parents[-1].type.spelling}': it was the address of the {ctx.cls.key} "
           f"subobject, after flattening it is the address of the whole "
           f"{st.target.key}")
    if msg not in st.warnings:
        st.warnings.append(msg)


def class_ref(st: FlatState, n: ci.Cursor, ctx: Ctx) -> ClassInfo | None:
    r = n.referenced
    if r is None:
        return None
    c = st.h.by_loc.get(cx.loc_key(r))
    if c is None:
        return None
    if c.template is None:
        return c
    tk = cx.record_key(n.type)
    if tk == c.key:
        return c
    if ctx.cls is c:
        selfname = unqualified_type_key(
            c.name + "<" + ",".join(p.spelling for p in c.params) + ">")
        if unqualified_type_key(n.type.spelling) in (selfname, c.name):
            return c
    return None


def _type_ref(st: FlatState, n: ci.Cursor, ctx: Ctx, params: dict, edits: list[Edit]) -> None:
    r = n.referenced
    f = cx.file_of(n)
    s, e = cx.span(n)
    if r is None:
        return
    if r.kind == CK.TEMPLATE_TYPE_PARAMETER:
        arg = params.get(cx.loc_key(r))
        if arg is not None:
            edits.append(Edit(f, s, e, arg, "template argument"))
        return
    c = class_ref(st, n, ctx)
    if c is not None and c.is_target:
        return
    if c is not None:
        text = st.src.text(f, s, e)
        if text != c.name and text != st.target.name:
            raise Unsupported(f"{c.key} is named through a macro or typedef "
                              f"('{text}') in hierarchy code",
                              "write the class name, or flatten the preprocessed file",
                              cx.presumed(n), code="unsupported-macro")
        q = qualifier_start(st, f, s)
        spell = ctx.t_spell
        edits.append(Edit(f, q, e, spell, "base type -> target"))
        return
    m = st.h.member_of(r)
    if m is not None and m.kind == "type" and not kept_visible(st, m):
        _hidden_used(st, m, n)


def _template_ref(st: FlatState, n: ci.Cursor, ctx: Ctx, params: dict, edits: list[Edit],
                  limit: int) -> None:
    r = n.referenced
    if r is None:
        return
    f = cx.file_of(n)
    s, e = cx.span(n)
    if r.kind == CK.TEMPLATE_TEMPLATE_PARAMETER:
        arg = params.get(cx.loc_key(r))
        if arg is not None:
            edits.append(Edit(f, s, e, arg, "template argument"))
        return
    c = st.template_classes.get(cx.key_of(r))
    if c is None:
        return
    toks = st.src.tokens(f, e, max(limit, e + 1))
    if not toks or toks[0].spelling != "<":
        return
    j = cx.matching_angle(toks, 0)
    args = []
    for part in cx.split_top_level(toks[1:j]):
        words = []
        for t in part:
            if t.kind == "IDENTIFIER":
                sub = next((params[k] for k in params
                            if _param_name(st, k) == t.spelling), None)
                words.append(sub if sub is not None else t.spelling)
            else:
                words.append(t.spelling)
        args.append(unqualified_type_key("".join(words)))
    if args != [unqualified_type_key(a) for a in c.args]:
        return
    q = qualifier_start(st, f, s)
    spell = ctx.t_spell
    edits.append(Edit(f, q, toks[j].end, spell, "base template-id -> target"))


def _param_name(st: FlatState, key: Key) -> str | None:
    for c in st.h.classes.values():
        for p in c.params:
            if cx.loc_key(p) == key:
                return p.spelling
    f, off = key
    tok = st.src.next_token(f, off, 128)
    return tok.spelling if tok else None


def _hidden_used(st: FlatState, m: Member, n: ci.Cursor) -> None:
    vis = st.visible.get(m.name)
    if m.kind in ("field", "static"):
        by = f"{vis.key}::{m.name}" if vis else m.name
        raise PreconditionFailed(
            3, "shadowed-member-used",
            f"data member {m.qualified} is shadowed by {by} but is still used here",
            f"rename one of the two data members (flattening keeps only {m.name} of "
            f"{vis.key if vis else 'the derived class'})", cx.presumed(n))
    raise PreconditionFailed(
        4, "hidden-name-used",
        f"{m.qualified} is hidden by a declaration of '{m.name}' in "
        f"{vis.key if vis else 'a derived class'} but is still used here",
        f"rename one of the two declarations of '{m.name}'", cx.presumed(n))


def _on_this(n: ci.Cursor) -> bool:
    kids = [c for c in n.get_children()
            if c.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)]
    if not kids:
        return True
    obj = kids[0]
    while obj.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
        inner = list(obj.get_children())
        if len(inner) != 1:
            break
        obj = inner[0]
    return obj.kind == CK.CXX_THIS_EXPR


def _member_ref(st: FlatState, n: ci.Cursor, ctx: Ctx, edits: list[Edit]) -> None:
    r = n.referenced
    if r is None:
        return
    if r.kind == CK.ENUM_CONSTANT_DECL:
        m = st.h.member_of(r.semantic_parent)
        if m is not None and not kept_visible(st, m):
            _hidden_used(st, m, n)
        return
    m = st.h.member_of(r)
    if m is None:
        return
    if m.kind in ("field", "static"):
        if not kept_visible(st, m) and n.kind != CK.MEMBER_REF:
            _hidden_used(st, m, n)
        return
    if m.kind != "method":
        return
    f = cx.file_of(n)
    name_start = n.location.offset
    quals = [c for c in n.get_children()
             if c.kind in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)
             and cx.span(c)[0] < name_start]
    prev = st.src.prev_token(f, name_start, 64)
    qualified = bool(quals) or (prev is not None and prev.spelling == "::")
    if m.virtual and not qualified:
        context = ctx.ctor_of if ctx.ctor_of is not None and _on_this(n) else None
        target = st.h.final_overrider(m, context)
    else:
        target = m
    if kept_visible(st, target):
        return
    new = rename(st, target)
    end = name_end(st, f, name_start, n)
    start = min([cx.span(q)[0] for q in quals] + [name_start])
    start = qualifier_start(st, f, start)
    edits.append(Edit(f, start, end, new, f"call of renamed copy {new}"))


def rename(st: FlatState, m: Member) -> str:
    """The name of the renamed copy of a hidden member (scheduling the copy)."""
    if m.key not in st.renames:
        base = m.name
        if base.startswith("operator"):
            op = base[len("operator"):].strip()
            base = "operator_" + _OPERATOR_WORDS.get(op, "op")
        st.renames[m.key] = unique_name(st, f"{m.cls.name}_{base}")
        st.queue.append(m)
    return st.renames[m.key]


def _paren(text: str) -> str:
    t = text.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9:]*|[0-9][0-9A-Za-z_'.]*", t):
        return t
    return f"({t})"
