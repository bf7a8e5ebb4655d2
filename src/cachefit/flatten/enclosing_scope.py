"""Step 3 of flattening for classes nested in another class (`class Outer::Walker`).

Code of a base nested in `Outer` sees `Outer`'s names unqualified and its private members;
in the target it does not, so such names are qualified (`kLeaf` -> `Outer::kLeaf`) and uses of
inaccessible members are refused. When the target itself is nested, base code must not name
a namespace-scope entity that a member of the enclosing class would hide. Renaming the
hierarchy's own classes is `rename_refs`.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.edits import Edit
from cachefit.flatten import cx
from cachefit.flatten.cx import CK, Key
from cachefit.flatten.model import ClassInfo
from cachefit.flatten.places import qualifier_start
from cachefit.flatten.problems import Unsupported
from cachefit.flatten.state import Ctx, FlatState
from cachefit.frontend.clang_records import qualified_decl_name

# references that may name a member of the class a base class is nested in
SCOPE_REF_KINDS = (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR,
                   CK.MEMBER_REF, CK.CALL_EXPR)


def enclosing_keys(st: FlatState, c: ClassInfo) -> dict[Key, ci.Cursor]:
    """The classes `c` is nested in (its enclosing classes, innermost first), by key."""
    if c.key not in st.enclosing_cache:
        out: dict[Key, ci.Cursor] = {}
        p = c.decl.semantic_parent
        while p is not None and p.kind in (*cx.RECORD_KINDS, CK.CLASS_TEMPLATE,
                                           CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION):
            if p.kind != CK.CLASS_TEMPLATE and cx.specialized_template(p) is None:
                k = cx.key_of(p)
                if k is not None:
                    out[k] = p
            else:
                raise Unsupported(f"base class {c.key} is nested in the class template "
                                  f"{p.spelling}",
                                  "flatten a hierarchy whose bases are not members of a "
                                  "class template", cx.presumed(c.body),
                                  code="unsupported-nested-in-template")
            p = p.semantic_parent
        st.enclosing_cache[c.key] = out
    return st.enclosing_cache[c.key]


def _scope_spelling(st: FlatState, e: ci.Cursor) -> str:
    """How code in the target's namespace names the class `e`."""
    parts = qualified_decl_name(e).split("::")
    ns = [n for n in cx.namespaces(e, semantic=True) if n]
    if st.t_namespaces[:len(ns)] == ns:
        return "::".join(parts[len(ns):])
    return "::" + "::".join(parts)


def _t_inside(st: FlatState, e: ci.Cursor) -> bool:
    """Whether the target is nested in `e` (it then has the access `e`'s members grant)."""
    k = cx.key_of(e)
    p = st.target.decl.semantic_parent
    while p is not None and p.kind in cx.RECORD_KINDS:
        if cx.key_of(p) == k:
            return True
        p = p.semantic_parent
    return False


def _t_friend_of(st: FlatState, e: ci.Cursor) -> bool:
    tk = cx.key_of(st.target.decl)
    for ch in e.get_children():
        if ch.kind != CK.FRIEND_DECL:
            continue
        for r in ch.get_children():
            d = r.referenced if r.kind == CK.TYPE_REF else r
            if d is not None and cx.key_of(d) == tk:
                return True
    return False


def enclosing_ref(st: FlatState, n: ci.Cursor, parents: tuple[ci.Cursor, ...], region: ci.Cursor,
                  ctx: Ctx, edits: list[Edit]) -> None:
    """Code of a class nested in another class E (`class Outer::Walker`) sees E's names
    unqualified, and E's private members. In the target it does not: qualify the name
    with E's, and refuse when E's member is not accessible from the target."""
    d = n.referenced
    if d is None or d.kind == CK.CONSTRUCTOR and n.kind != CK.CALL_EXPR:
        return
    enclosing = enclosing_keys(st, ctx.cls)
    owner = d.semantic_parent
    access_decl = d
    if d.kind == CK.ENUM_CONSTANT_DECL and owner is not None:
        access_decl = owner
        owner = None if owner.is_scoped_enum() else owner.semantic_parent
    dk = cx.key_of(d)
    ok = cx.key_of(owner) if owner is not None else None
    if dk in enclosing and n.kind in (CK.TYPE_REF, CK.TEMPLATE_REF):
        e, member = enclosing[dk], False
    elif ok in enclosing:
        e, member = enclosing[ok], True
    else:
        return
    if member and access_decl.access_specifier in (ci.AccessSpecifier.PRIVATE,
                                                   ci.AccessSpecifier.PROTECTED) \
            and not _t_inside(st, e) and not _t_friend_of(st, e):
        access = "private" if access_decl.access_specifier == \
            ci.AccessSpecifier.PRIVATE else "protected"
        name = qualified_decl_name(e) + "::" + (e.spelling if d.kind == CK.CONSTRUCTOR
                                                else d.spelling)
        raise Unsupported(f"{ctx.cls.key} is nested in {qualified_decl_name(e)} and uses "
                          f"its {access} member {name}, which {st.target.key} cannot access",
                          f"declare {st.target.key} a friend of {qualified_decl_name(e)}, or "
                          f"make {name} public", cx.presumed(n),
                          code="unsupported-enclosing-access")
    if n.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR):
        return
    if parents and parents[-1] == region and cx.is_name_qualifier(n, region):
        return
    f = cx.file_of(n)
    s = n.location.offset if n.kind == CK.DECL_REF_EXPR else cx.span(n)[0]
    toks = st.src.tokens(f, s, s + 256)
    if not toks or toks[0].kind != "IDENTIFIER" or toks[0].spelling != d.spelling:
        return
    if qualifier_start(st, f, s) != s:
        return      # written qualified: the qualifier names E or a class in it
    prev = st.src.prev_token(f, s, 64)
    if prev is not None and prev.spelling in (".", "->", "~"):
        return
    scope = _scope_spelling(st, e)
    text = f"{scope}::{d.spelling}" if member else scope
    if text != d.spelling:
        edits.append(Edit(f, s, toks[0].end, text, "name of the enclosing class"))


def t_scope_names(st: FlatState) -> dict[str, tuple[ci.Cursor, ci.Cursor]]:
    """The names the classes the target is nested in declare (their members and their
    bases' members), each with the class and the member: lookup in the target finds them
    before any namespace-scope name."""
    if st.scope_names is None:
        names: dict[str, tuple[ci.Cursor, ci.Cursor]] = {}

        def add(rec: ci.Cursor, owner: ci.Cursor, depth: int) -> None:
            for ch in rec.get_children():
                if ch.kind == CK.CXX_BASE_SPECIFIER and depth < 8:
                    b = ch.type.get_canonical().get_declaration()
                    if b is not None and b.kind in cx.RECORD_KINDS:
                        add(b, owner, depth + 1)
                elif ch.kind == CK.ENUM_DECL and not ch.is_scoped_enum():
                    for e in ch.get_children():
                        names.setdefault(e.spelling, (owner, e))
                if ch.spelling and ch.kind.is_declaration() and ch.kind not in (
                        CK.CXX_ACCESS_SPEC_DECL, CK.FRIEND_DECL):
                    names.setdefault(ch.spelling.split("<", 1)[0], (owner, ch))

        p = st.target.decl.semantic_parent
        while p is not None and p.kind in cx.RECORD_KINDS:
            d = p.get_definition() or p
            names.setdefault(d.spelling, (d, d))    # its injected class name
            add(d, d, 0)
            p = p.semantic_parent
        st.scope_names = names
    return st.scope_names


def hijacked(st: FlatState, n: ci.Cursor, ctx: Ctx) -> None:
    """Refuse when base code names a namespace-scope entity that, inside the target
    (nested in another class), a member of an enclosing class would hide."""
    r = n.referenced
    if n.kind != CK.OVERLOADED_DECL_REF:
        if r is None or r.semantic_parent is None or r.semantic_parent.kind not in (
                CK.NAMESPACE, CK.TRANSLATION_UNIT, CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL):
            return
        name = r.spelling
    else:
        name = n.spelling
    found = t_scope_names(st).get(name)
    if found is None:
        return
    owner, member = found
    if r is not None and cx.key_of(member) == cx.key_of(r):
        return      # the same entity
    f = cx.file_of(n)
    s = n.location.offset if n.kind != CK.TYPE_REF else cx.span(n)[0]
    if qualifier_start(st, f, s) != s:
        return
    prev = st.src.prev_token(f, s, 64)
    if prev is not None and prev.spelling in (".", "->"):
        return
    outer = qualified_decl_name(owner)
    raise Unsupported(f"code of {ctx.cls.key} names '{name}' of its namespace, but in "
                      f"{st.target.key}, nested in {outer}, '{name}' would mean "
                      f"{outer}::{name}",
                      f"qualify the name in {ctx.cls.key} (::{qualified_decl_name(r)})"
                      if r is not None else f"qualify the name in {ctx.cls.key}",
                      cx.presumed(n), code="unsupported-hidden-by-enclosing")
