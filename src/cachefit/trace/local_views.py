"""The one record type a local pointer variable is converted to in its function (issue 27).

Some allocators return a pointer to a common header, and their callers keep the result in
a variable of that type and convert it to the object's own type afterwards. Lua does so
for every collectable object: `GCObject *o = luaC_newobj(L, LUA_VTABLE, sizeof(Table));
Table *t = gco2t(o);`, where `gco2t(o)` is `&((union GCUnion *)(o))->h`, a member of a
union of all the object types. The unit instrumenter (cachefit.trace.unit_instrument)
registers such a call's result as a T when its size argument names T and `local_view`
says the variable holding it is converted to T and to no other record in the function.

A conversion of the variable `v` is:
  * a cast (explicit or implicit, through other casts and parentheses) of `v` to a pointer
    to a record R: `(T *)v`, `(T *)(void *)v`, `T *t = v;` with `v` a `void *`;
  * a member access through a union that `v` is converted to: `((union U *)v)->h` and
    `&((union U *)v)->h` are views of `v` as h's type, and so is `((union U *)v)->cl.l`
    when `cl` is itself a union (every member of a union starts at its address).
Unions themselves, the variable's own pointee type and non-record types are no views (a
union says only "one of its members"; a cast to `union U *` on its way to a member says
nothing more). Two distinct record views, or none, give None: a header converted to
`Table *` on one path and to `Udata *` on another is neither. A member access through a
struct (`&((struct S *)v)->first`) is a view of v as an S, not as the member's type.

Nothing here edits text or decides about sizes: the rule only reads libclang cursors.
"""

from __future__ import annotations

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind

# Conversions looked through from a conversion's value down to the variable.
_CASTS = {CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR,
          CK.CXX_FUNCTIONAL_CAST_EXPR}
_THROUGH = _CASTS | {CK.PAREN_EXPR, CK.UNEXPOSED_EXPR}


def _expr_kids(c: ci.Cursor) -> list[ci.Cursor]:
    return [k for k in c.get_children() if k.kind.is_expression()]


def _is_var(e: ci.Cursor, var: ci.Cursor) -> bool:
    """Whether `e` is `var` itself, through parentheses and casts."""
    while e.kind in _THROUGH:
        kids = _expr_kids(e)
        if e.kind not in _CASTS and len(kids) != 1 or not kids:
            return False
        e = kids[-1]
    return e.kind == CK.DECL_REF_EXPR and e.referenced == var


def _record(t: ci.Type) -> ci.Type | None:
    """The canonical record type `t` is (None for anything else)."""
    canon = t.get_canonical()
    return canon if canon.kind == TK.RECORD else None


def _is_union(t: ci.Type) -> bool:
    rec = _record(t)
    return rec is not None and rec.get_declaration().kind == CK.UNION_DECL


def _through_union(m: ci.Cursor, var: ci.Cursor) -> bool:
    """Whether the member access `m` reads a member of a union that is `var` converted
    (`((union U *)var)->h`), or a member of such a member that is itself a union
    (`((union U *)var)->cl.l`)."""
    kids = _expr_kids(m)
    if not kids:
        return False
    base = kids[0]
    while base.kind == CK.PAREN_EXPR and len(_expr_kids(base)) == 1:
        base = _expr_kids(base)[0]
    bt = base.type.get_canonical()
    if bt.kind == TK.POINTER:       # base->member
        return _is_union(bt.get_pointee()) and _is_var(base, var)
    if _is_union(bt) and base.kind == CK.MEMBER_REF_EXPR:     # (...)->cl.member
        return _through_union(base, var)
    return False


def _key(t: ci.Type) -> str:
    decl = t.get_declaration()
    return str(decl.get_usr() or t.spelling)


def local_view(fn: ci.Cursor, var: ci.Cursor) -> ci.Type | None:
    """The record type (not a union, not `var`'s own pointee) that the local pointer
    variable `var` is converted to in the function `fn`, when there is exactly one (see
    the module's docstring); None otherwise."""
    own = var.type.get_canonical()
    if own.kind != TK.POINTER:
        return None
    own_rec = _record(own.get_pointee())
    seen: dict[str, ci.Type] = {}

    def view(t: ci.Type) -> None:
        rec = _record(t)
        if rec is None or _is_union(rec) or \
                own_rec is not None and _key(rec) == _key(own_rec):
            return
        seen.setdefault(_key(rec), rec)

    for d in fn.walk_preorder():
        if d.kind == CK.MEMBER_REF_EXPR:
            if _through_union(d, var):
                view(d.type)
        elif d.kind in _CASTS or d.kind == CK.UNEXPOSED_EXPR:
            kids = _expr_kids(d)
            t = d.type.get_canonical()
            if kids and t.kind == TK.POINTER and _is_var(kids[-1], var):
                view(t.get_pointee())
    return next(iter(seen.values())) if len(seen) == 1 else None
