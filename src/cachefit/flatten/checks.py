"""Precondition 2 of transparent flattening: outside the hierarchy, only the target is used.

Walks every declaration of a translation unit that is not part of the hierarchy (not a class
of it, not an out-of-line definition of one of its members) and looks at types and
expressions, not at text: a variable, parameter, field, return type or typedef whose type is
a base class (by value: an instance; through a pointer or reference: a pointer to a base), a
`new` or a temporary of a base, a conversion of the target to a base (explicit cast or
implicit conversion, except the conversion of the object of a member access or of an argument
of a hierarchy member function, which flattening turns into the target itself), a
`dynamic_cast` or `typeid` on a class of the hierarchy, a class derived from the target, and
any other mention of a base class. Base classes that other classes outside the hierarchy
derive from are recorded: they are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.cx import CK, Key
from cachefit.flatten.model import ClassInfo, Hierarchy
from cachefit.flatten.problems import PreconditionFailed

_CASTS = (CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR, CK.CXX_CONST_CAST_EXPR,
          CK.CSTYLE_CAST_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR)
_DECLS = (CK.VAR_DECL, CK.PARM_DECL, CK.FIELD_DECL)
_CONTAINERS = (CK.NAMESPACE, CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL)

# Order in which violations are reported when a unit has several.
_PRIORITY = {"dynamic-cast": 0, "typeid": 1, "base-conversion": 2, "not-most-derived": 3,
             "base-pointer": 4, "base-instance": 5, "base-named": 6}


@dataclass
class Violation:
    code: str
    what: str
    todo: str
    cursor: ci.Cursor

    def error(self) -> PreconditionFailed:
        return PreconditionFailed(2, self.code, self.what, self.todo, cx.presumed(self.cursor))


@dataclass
class OutsideUse:
    """What the walk found outside the hierarchy."""

    violations: list[Violation] = field(default_factory=list)
    used_elsewhere: set[str] = field(default_factory=set)        # class keys
    templates_used_elsewhere: set[Key] = field(default_factory=set)
    out_of_line: list[ci.Cursor] = field(default_factory=list)   # definitions of members
    # `base::name` naming a static member, a nested type or an enumerator of a base: the
    # qualifier (TYPE_REF), the base, and the named declaration
    static_refs: list[tuple[ci.Cursor, ClassInfo, ci.Cursor]] = field(default_factory=list)

    def raise_first(self) -> None:
        if not self.violations:
            return
        ordered = sorted(self.violations, key=lambda v: _PRIORITY[v.code])
        first = ordered[0]
        err = first.error()
        others = [f"{cx.presumed(v.cursor)}: {v.what}" for v in ordered[1:6]]
        if len(ordered) > 6:
            others.append(f"... and {len(ordered) - 6} more")
        err.details.extend(others)
        raise err


class OutsideChecker:
    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self.t = h.target
        self.bases = {k: c for k, c in h.classes.items() if not c.is_target}
        self.template_keys = {cx.key_of(c.template): c for c in h.classes.values()
                              if c.template is not None}
        self.class_bodies = {c.body_key for c in h.classes.values()}
        self.src = h.src
        self.result = OutsideUse()

    # ---- helpers --------------------------------------------------------------------------
    def class_of_type(self, t: ci.Type) -> tuple[ClassInfo | None, bool]:
        inner, indirect = cx.strip_type(t)
        k = cx.record_key(inner)
        return (self.h.classes.get(k) if k else None), indirect

    def base_of_type(self, t: ci.Type) -> tuple[ClassInfo | None, bool]:
        c, indirect = self.class_of_type(t)
        if c is not None and c.is_target:
            return None, indirect
        return c, indirect

    def base_in_template_args(self, t: ci.Type, depth: int = 0) -> tuple[ClassInfo | None, bool]:
        inner, _ = cx.strip_type(t)
        n = inner.get_num_template_arguments()
        for i in range(max(n, 0)):
            at = inner.get_template_argument_type(i)
            if at.kind == ci.TypeKind.INVALID:
                continue
            c, ind = self.base_of_type(at)
            if c is not None:
                return c, ind
            if depth < 4:
                c, ind = self.base_in_template_args(at, depth + 1)
                if c is not None:
                    return c, ind
        return None, False

    def is_hierarchy_member_function(self, cursor: ci.Cursor | None) -> bool:
        if cursor is None or cursor.kind not in cx.METHOD_KINDS:
            return False
        return self.h.member_of(cursor) is not None

    def add(self, code: str, what: str, todo: str, cursor: ci.Cursor) -> None:
        self.result.violations.append(Violation(code, what, todo, cursor))

    def is_hierarchy_decl(self, cursor: ci.Cursor) -> bool:
        """A class of the hierarchy, or an out-of-line definition of one of its members."""
        if cursor.kind in cx.RECORD_KINDS or cursor.kind == CK.CLASS_TEMPLATE:
            return cx.loc_key(cursor) in self.class_bodies and cursor.is_definition()
        parent = cursor.semantic_parent
        if parent is not None and cursor.lexical_parent is not None and \
                parent != cursor.lexical_parent:
            if cx.loc_key(parent) in self.h.by_loc:
                return True
        return False

    # ---- the walk ------------------------------------------------------------------------
    def run(self, tu: ci.TranslationUnit) -> OutsideUse:
        self._top(tu.cursor)
        return self.result

    def _top(self, cursor: ci.Cursor) -> None:
        for child in cursor.get_children():
            loc = child.location
            if loc.file is None or loc.is_in_system_header:
                continue
            if child.kind in _CONTAINERS:
                self._top(child)
                continue
            if self.is_hierarchy_decl(child):
                if child.kind not in cx.RECORD_KINDS and child.kind != CK.CLASS_TEMPLATE:
                    self.result.out_of_line.append(child)
                continue
            if child.kind in cx.RECORD_KINDS and not child.is_definition():
                continue   # a forward declaration
            self._node(child, (cursor,))

    def _node(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...]) -> None:
        if self._check(n, parents):
            chain = (*parents, n)
            for child in n.get_children():
                self._node(child, chain)

    def _check(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...]) -> bool:
        """Look at one node; return whether to descend into it."""
        k = n.kind
        t_name = self.t.key
        if k == CK.CXX_BASE_SPECIFIER:
            c, _ = self.class_of_type(n.type)
            owner = parents[-1] if parents else None
            if c is not None and c.is_target:
                self.add("not-most-derived",
                         f"{owner.spelling if owner else 'a class'} derives from {t_name}, "
                         f"so {t_name} is not the most derived class",
                         f"flatten the most derived class instead, or stop deriving from "
                         f"{t_name}", n)
            elif c is not None:
                self.result.used_elsewhere.add(c.key)
                if c.template is not None:
                    self.result.templates_used_elsewhere.add(cx.key_of(c.template))
            else:
                # another specialization of a template base (Walker<int> next to the
                # hierarchy's Walker<long>): the template stays
                tmpl = cx.specialized_template(n.type.get_canonical().get_declaration())
                tk = cx.key_of(tmpl) if tmpl is not None else None
                if tk in self.template_keys:
                    self.result.templates_used_elsewhere.add(tk)
            return False
        if k == CK.FRIEND_DECL:
            return False
        if k == CK.CXX_DYNAMIC_CAST_EXPR:
            types = [n.type] + [c.type for c in n.get_children()]
            hit = next((c for c, _ in map(self.class_of_type, types) if c is not None), None)
            if hit is not None:
                self.add("dynamic-cast", f"dynamic_cast on {hit.key}, a class of the "
                         f"hierarchy of {t_name}",
                         f"remove the dynamic_cast: the flat {t_name} has no virtual "
                         "functions and no base classes", n)
                return False
        if k == CK.CXX_TYPEID_EXPR:
            types = [c.type for c in n.get_children()]
            hit = next((c for c, _ in map(self.class_of_type, types) if c is not None), None)
            if hit is not None:
                self.add("typeid", f"typeid on {hit.key}, a class of the hierarchy of "
                         f"{t_name}",
                         f"remove the typeid: the flat {t_name} is not polymorphic", n)
                return False
        if k in _CASTS:
            b, _ = self.base_of_type(n.type)
            if b is not None:
                self.add("base-conversion", f"conversion to base class {b.key} of {t_name}",
                         f"use {t_name} itself instead of its base class", n)
                return False
        if k == CK.UNEXPOSED_EXPR:
            b, _ = self.base_of_type(n.type)
            if b is not None:
                kids = list(n.get_children())
                src = kids[0] if len(kids) == 1 else None
                sc, _ = self.class_of_type(src.type) if src is not None else (None, False)
                if sc is not None and sc is not b and not self._exempt(n, parents):
                    self.add("base-conversion",
                             f"{sc.key} is converted to its base class {b.key}",
                             f"use {t_name} itself (a {t_name}& or {t_name}*) instead of the "
                             "base class", n)
                    return False
        if k in _DECLS or k in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL, CK.FUNCTION_DECL,
                                CK.CXX_METHOD):
            if k in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL):
                t = n.underlying_typedef_type
            elif k in (CK.FUNCTION_DECL, CK.CXX_METHOD):
                t = n.result_type
            else:
                t = n.type
            b, indirect = self.base_of_type(t)
            if b is None:
                b, indirect = self.base_in_template_args(t)
            if b is not None:
                what = {CK.VAR_DECL: "variable", CK.PARM_DECL: "parameter",
                        CK.FIELD_DECL: "field", CK.TYPEDEF_DECL: "typedef",
                        CK.TYPE_ALIAS_DECL: "alias", CK.FUNCTION_DECL: "return type of",
                        CK.CXX_METHOD: "return type of"}[k]
                if indirect or k in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL):
                    self.add("base-pointer",
                             f"{what} '{n.spelling}' is a pointer or reference to base class "
                             f"{b.key} of {t_name}",
                             f"declare it with {t_name} instead of {b.key}", n)
                else:
                    self.add("base-instance",
                             f"{what} '{n.spelling}' is an instance of base class {b.key} of "
                             f"{t_name}", f"instantiate only {t_name}", n)
                if k not in (CK.FUNCTION_DECL, CK.CXX_METHOD):
                    return False
        if k == CK.CXX_NEW_EXPR:
            b, _ = self.base_of_type(n.type)
            if b is not None:
                self.add("base-instance", f"new of base class {b.key} of {t_name}",
                         f"instantiate only {t_name}", n)
                return False
        if k in (CK.CALL_EXPR, CK.TYPE_REF, CK.TEMPLATE_REF, CK.INIT_LIST_EXPR) and parents \
                and parents[-1].kind == CK.CONSTRUCTOR:
            # a mem-initializer of a class outside the hierarchy that shares a base class:
            # it constructs that class's own base subobject
            return True
        if k == CK.CALL_EXPR:
            ref = n.referenced
            if ref is not None and ref.kind == CK.CONSTRUCTOR:
                c = self.h.by_loc.get(cx.loc_key(ref.semantic_parent)) \
                    if ref.semantic_parent is not None else None
                b, _ = self.base_of_type(n.type)
                if b is not None and c is not None and not c.is_target:
                    args = list(n.get_arguments())
                    src = self._source_class(args[0], b) if len(args) == 1 else None
                    if (ref.is_copy_constructor() or ref.is_move_constructor()) and \
                            src is not None and src is not b:
                        self.add("base-conversion",
                                 f"{src.key} is converted (copied) to its base class {b.key}",
                                 f"use {t_name} itself instead of the base class", n)
                    else:
                        self.add("base-instance",
                                 f"temporary of base class {b.key} of {t_name}",
                                 f"instantiate only {t_name}", n)
                    return False
        if k == CK.TYPE_REF:
            ref = n.referenced
            c = self.h.by_loc.get(cx.loc_key(ref)) if ref is not None else None
            if c is not None and not c.is_target:
                tk = cx.record_key(n.type)
                named = self._names_static_member(n, parents, c)
                if named is not None:
                    self.result.static_refs.append((n, c, named))
                    return False
                if c.template is None or tk == c.key:
                    self.add("base-named", f"base class {c.key} of {t_name} is named outside "
                             "the hierarchy",
                             f"refer to {t_name} instead (for a member: {t_name}::name)", n)
                    return False
        if k == CK.TEMPLATE_REF:
            ref = n.referenced
            lk = cx.key_of(ref) if ref is not None else None
            if lk in self.template_keys:
                self.result.templates_used_elsewhere.add(lk)
        return True

    def _names_static_member(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...],
                             c: ClassInfo) -> ci.Cursor | None:
        """The declaration `c::name` names when the base-class name `n` is the qualifier of a
        static member function, a static data member, a nested type or an enumerator of `c`
        (no object is converted to the base); else None."""
        if not parents:
            return None
        f = cx.file_of(n)
        toks = self.src.tokens(f, cx.span(n)[1], cx.span(n)[1] + 256) if f else []
        if len(toks) < 2 or toks[0].spelling != "::" or toks[1].kind != "IDENTIFIER":
            return None
        name_at = toks[1].begin
        p = parents[-1]
        cands = [p] + [ch for ch in p.get_children() if ch != n]
        for cand in cands:
            if cand.kind not in (CK.DECL_REF_EXPR, CK.TYPE_REF, CK.TEMPLATE_REF):
                continue
            at = cand.location.offset if cand.kind == CK.DECL_REF_EXPR else cx.span(cand)[0]
            if at != name_at or cx.file_of(cand) != f:
                continue
            r = cand.referenced
            if r is None:
                return None
            owner = r.semantic_parent
            if r.kind == CK.ENUM_CONSTANT_DECL and owner is not None:
                owner = owner.semantic_parent
            oc = self.h.by_loc.get(cx.loc_key(owner)) or self.h.by_loc.get(cx.key_of(owner)) \
                if owner is not None else None
            if oc is None or oc is not c and not self.h.derives(c, oc):
                return None
            if r.kind == CK.CXX_METHOD and r.is_static_method():
                return r
            if r.kind in (CK.VAR_DECL, CK.ENUM_CONSTANT_DECL) or r.kind in cx.TYPE_KINDS:
                return r
            return None
        return None

    def _source_class(self, expr: ci.Cursor, b: ClassInfo) -> ClassInfo | None:
        """The hierarchy class (other than `b`) an expression converted to `b` started as."""
        node: ci.Cursor | None = expr
        while node is not None:
            c, _ = self.class_of_type(node.type)
            if c is not None and c is not b:
                return c
            kids = list(node.get_children())
            node = kids[0] if len(kids) == 1 and node.kind in (
                CK.UNEXPOSED_EXPR, CK.PAREN_EXPR) else None
        return None

    def _exempt(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...]) -> bool:
        """An implicit conversion that flattening makes unnecessary."""
        if not parents:
            return False
        p = parents[-1]
        if p.kind == CK.MEMBER_REF_EXPR:
            kids = list(p.get_children())
            return bool(kids) and kids[0] == n
        if p.kind == CK.CALL_EXPR and self.is_hierarchy_member_function(p.referenced):
            return True
        if p.kind == CK.UNEXPOSED_EXPR and len(parents) > 1:
            return self._exempt(p, parents[:-1])
        return False


def check_outside(h: Hierarchy, tu: ci.TranslationUnit, raise_errors: bool = True
                  ) -> OutsideUse:
    result = OutsideChecker(h).run(tu)
    if raise_errors:
        result.raise_first()
    return result
