"""Step 1 of flattening (paper 001 §3), the choice: which base members the flat class keeps.

For each name, lookup in the target finds the declarations of the most derived classes that
declare it (`Hierarchy.visible_classes`); those are copied (`FlatState.copied`), the others
dropped, so overridden functions and shadowed members disappear. Ambiguous names, data members
declared twice and user-provided copy operations of bases are refused here. Writing the copies
is `clone_members`.
"""

from __future__ import annotations

from cachefit.flatten import cx
from cachefit.flatten.model import Member
from cachefit.flatten.problems import PreconditionFailed, Unsupported
from cachefit.flatten.state import FlatState


def select_members(st: FlatState) -> None:
    h = st.h
    for name, decls in h.names().items():
        vis = h.visible_classes(decls)
        if len(vis) > 1:
            data = [d for d in decls if d.kind in ("field", "static") and d.cls in vis]
            first, second = [next(d for d in decls if d.cls is c) for c in vis[:2]]
            where = cx.presumed(second.cursor)
            if data:
                raise PreconditionFailed(
                    3, "duplicate-data-member",
                    f"data member '{name}' is declared in both {first.cls.key} "
                    f"({cx.presumed(first.cursor)}) and {second.cls.key}, and neither "
                    "hides the other",
                    f"rename one of them, or declare '{name}' once in a common base", where)
            raise PreconditionFailed(
                4, "ambiguous-name",
                f"'{name}' is declared in both {first.cls.key} ({cx.presumed(first.cursor)}) "
                f"and {second.cls.key}; lookup of '{name}' in {st.target.key} would need a "
                "base-class qualifier",
                f"rename one of them, or declare '{name}' in {st.target.key}", where)
        if vis:
            st.visible[name] = vis[0]
    for c in h.construction_order:
        if c.is_target:
            continue
        for m in c.members:
            _select_member(st, m)


def _select_member(st: FlatState, m: Member) -> None:
    where = cx.presumed(m.cursor)
    if m.kind in ("ctor", "dtor"):
        user = not m.defaulted and not m.deleted
        if m.kind == "ctor" and user and (m.cursor.is_copy_constructor() or
                                          m.cursor.is_move_constructor()):
            raise Unsupported(f"{m.cls.key} has a user-provided copy or move constructor",
                              "default it, or copy the members in the most derived class",
                              where, code="unsupported-copy-constructor")
        return
    if m.kind in ("friend", "assert"):
        st.copied.append(m)
        return
    if m.name == "operator=":
        if not m.defaulted and not m.deleted and (
                m.cursor.is_copy_assignment_operator_method() or
                m.cursor.is_move_assignment_operator_method()):
            raise Unsupported(f"{m.cls.key} has a user-provided copy or move assignment",
                              "default it, or assign the members in the most derived "
                              "class", where, code="unsupported-copy-assignment")
        st.dropped.append(m)
        return
    owners = [st.visible.get(n) for n in m.names]
    if owners and all(o is m.cls for o in owners):
        if m.kind == "field" and m.group and any(
                st.visible.get(g.name) is not m.cls for g in m.group):
            raise Unsupported("fields declared together are partly hidden",
                              "declare each data member on its own line", where)
        if m.pure:
            raise PreconditionFailed(1, "abstract",
                                     f"{st.target.key} is abstract: {m.qualified} is pure "
                                     "virtual and not overridden",
                                     f"override {m.name} in the hierarchy of {st.target.key}",
                                     where)
        st.copied.append(m)
    elif any(o is m.cls for o in owners):
        raise Unsupported(f"{m.qualified}: some of the names it declares are hidden",
                          "give the enumerators distinct names", where)
    else:
        st.dropped.append(m)
