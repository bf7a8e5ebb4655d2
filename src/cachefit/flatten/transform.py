"""The five steps of class flattening (paper 001, §3) as an edit list on the source.

1. Clone the members of the base classes into the target, breadth-first from the target so
   that the final overrider (and, for any name, the declaration lookup finds) wins; data
   members in the order the compiler laid the subobjects out.
2. Clone out-of-line member definitions and move them to the target's scope.
3. Rename base-class types (and template parameters of template bases) in cloned code.
4. Turn base constructors and destructors into member functions of the target, called from
   its constructors and destructor in the order C++ runs them.
5. Drop `virtual`, `override`, `final`, the base-specifier list and the base classes.

All edits are computed from AST extents and libclang tokens; the copied text is the source
text of those extents with local edits applied. Nothing is written here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.edits import Edit, EditList, apply_to_slice, drop_contained
from cachefit.flatten import cx
from cachefit.flatten.checks import OutsideUse
from cachefit.flatten.cx import CK, Key, Tok
from cachefit.flatten.layout import TargetLayout
from cachefit.flatten.model import ClassInfo, Hierarchy, Member
from cachefit.flatten.problems import PreconditionFailed, Unsupported
from cachefit.frontend.clang_records import qualified_decl_name

_OPERATOR_WORDS = {
    "==": "eq", "!=": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "+": "plus",
    "-": "minus", "*": "mul", "/": "div", "%": "mod", "+=": "plus_assign",
    "-=": "minus_assign", "*=": "mul_assign", "/=": "div_assign", "()": "call",
    "[]": "index", "!": "not", "~": "compl", "&": "and", "|": "or", "^": "xor",
    "<<": "shl", ">>": "shr", "++": "inc", "--": "dec", "->": "arrow", "<=>": "cmp",
}


# references that may name a member of the class a base class is nested in
_SCOPE_REF_KINDS = (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR,
                    CK.MEMBER_REF, CK.CALL_EXPR)


@dataclass(frozen=True)
class Ctx:
    """How references in a piece of hierarchy code are resolved and rewritten."""

    cls: ClassInfo                  # the class the code is a member of
    ctor_of: ClassInfo | None       # the class being constructed/destroyed (ctor/dtor code)
    params: tuple[Key | None, ...]  # template parameters of the code, mapped to cls.args
    t_spell: str                    # how to write the target's name here


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


@dataclass
class Call:
    """A call of an init function that replaces a base constructor or destructor."""

    member: Member                  # the base constructor/destructor
    item: Item | None               # its mem-initializer (arguments), if any
    ctx: Ctx | None                 # context of the item's code


@dataclass
class Facts:
    """What one unit learned that others must agree on: renamed copies of hidden members,
    and which base constructors/destructors do nothing (known where they are defined)."""

    renames: dict[Key, str] = field(default_factory=dict)
    empty: dict[Key, bool] = field(default_factory=dict)

    def merge(self, other: Facts) -> bool:
        """Add `other`'s facts; return whether anything was new."""
        new = False
        for k, v in other.renames.items():
            if k not in self.renames:
                self.renames[k] = v
                new = True
        for k, v in other.empty.items():
            if k not in self.empty:
                self.empty[k] = v
                new = True
        return new


@dataclass
class FlattenPlan:
    """What `Flattener.run` produced for one translation unit."""

    edits: EditList
    report: dict
    warnings: list[str] = field(default_factory=list)
    facts: Facts = field(default_factory=Facts)


class Flattener:
    def __init__(self, h: Hierarchy, src: cx.Source, main_file: str, outside: OutsideUse,
                 layout: TargetLayout | None, include_target: str | None = None,
                 cxx17: bool = True, seeds: Facts | None = None) -> None:
        self.h = h
        self.src = src
        self.T = h.target
        self.main_file = main_file
        self.outside = outside
        self.layout = layout
        self.include_target = include_target   # header to #include where T is not visible
        self.cxx17 = cxx17
        self.seeds = seeds or Facts()
        self._included: set[str] = set()
        self._empty_known: dict[Key, bool] = {}
        self.edits = EditList()
        self.warnings: list[str] = []
        self.renames: dict[Key, str] = {}
        self.init_names: dict[Key, str] = {}
        self.copied: list[Member] = []
        self.dropped: list[Member] = []
        self.visible: dict[str, ClassInfo] = {}
        self._region_cache: dict[tuple[Key | None, bool], list[Edit]] = {}
        self._queue: list[Member] = []
        self._hier_names: set[str] = set(h.names()) | {c.name for c in h.classes.values()}
        self._used_names: set[str] = set(self._hier_names)
        self._ctor_cache: dict[Key | None, CtorDef | None] = {}
        self._empty_cache: dict[Key, bool] = {}
        self._enclosing_cache: dict[str, dict[Key, ci.Cursor]] = {}
        self._scope_names: dict[str, tuple[ci.Cursor, ci.Cursor]] | None = None
        self.template_classes = {cx.key_of(c.template): c for c in h.classes.values()
                                 if c.template is not None}
        tdecl = self.T.decl
        self.t_file = cx.file_of(tdecl)
        self.t_qualified = qualified_decl_name(tdecl)
        # the name in the target's namespace: with its enclosing classes (Outer::Inner)
        named_ns = [n for n in self._namespaces(tdecl, semantic=True) if n]
        self.t_ns_spell = "::".join(self.t_qualified.split("::")[len(named_ns):])
        self.t_namespaces = self._namespaces(tdecl, semantic=True)
        for d in outside.out_of_line:
            m = h.member_of(d)
            if m is None or d in m.defs:
                continue
            # an instantiated definition points into its template's definition: keep the
            # definition as written (the larger extent)
            f, (s, e) = cx.file_of(d), cx.span(d)
            inside = [o for o in m.defs if cx.file_of(o) == f and
                      cx.span(o)[0] <= s and e <= cx.span(o)[1]]
            if inside:
                continue
            m.defs[:] = [o for o in m.defs if not (cx.file_of(o) == f and
                                                   s <= cx.span(o)[0] and
                                                   cx.span(o)[1] <= e)]
            m.defs.append(d)

    # ==== names and places =================================================================
    @staticmethod
    def _namespaces(cursor: ci.Cursor, semantic: bool) -> list[str]:
        out = []
        c = cursor.semantic_parent if semantic else cursor.lexical_parent
        while c is not None and c.kind != CK.TRANSLATION_UNIT:
            if c.kind == CK.NAMESPACE:
                out.append(c.spelling)
            c = c.semantic_parent if semantic else c.lexical_parent
        return list(reversed(out))

    def t_spell_at(self, cursor: ci.Cursor) -> str:
        """The target's name as code at namespace scope around `cursor` must write it."""
        ns = self._namespaces(cursor, semantic=False)
        if ns[:len(self.t_namespaces)] == self.t_namespaces:
            return self.t_ns_spell
        return "::" + self.t_qualified

    def unique_name(self, base: str) -> str:
        """A new member name from `base` that no declaration of the hierarchy uses.

        Deterministic: the same base always gives the same name, whatever else was
        generated, so that every unit of a build generates the same names."""
        name = base
        i = 2
        while name in self._hier_names:
            name = f"{base}{i}"
            i += 1
        return name

    def ctx_for(self, m: Member, region: ci.Cursor, in_class: bool,
                ctor: bool = False) -> Ctx:
        if region is m.cursor or in_class:
            params = tuple(cx.loc_key(p) for p in m.cls.params)
            spell = self.T.name
        else:
            own = [c for c in region.get_children() if c.kind in cx.TEMPLATE_PARAM_KINDS]
            params = tuple(cx.loc_key(p) for p in own[:len(m.cls.params)])
            spell = self.t_spell_at(region)
        return Ctx(m.cls, m.cls if ctor and not m.cls.is_target else None, params, spell)

    # ==== step 1: what the flat class keeps ================================================
    def select(self) -> None:
        h = self.h
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
                    f"and {second.cls.key}; lookup of '{name}' in {self.T.key} would need a "
                    "base-class qualifier",
                    f"rename one of them, or declare '{name}' in {self.T.key}", where)
            if vis:
                self.visible[name] = vis[0]
        for c in h.construction_order:
            if c.is_target:
                continue
            for m in c.members:
                self._select_member(m)

    def _select_member(self, m: Member) -> None:
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
            self.copied.append(m)
            return
        if m.name == "operator=":
            if not m.defaulted and not m.deleted and (
                    m.cursor.is_copy_assignment_operator_method() or
                    m.cursor.is_move_assignment_operator_method()):
                raise Unsupported(f"{m.cls.key} has a user-provided copy or move assignment",
                                  "default it, or assign the members in the most derived "
                                  "class", where, code="unsupported-copy-assignment")
            self.dropped.append(m)
            return
        owners = [self.visible.get(n) for n in m.names]
        if owners and all(o is m.cls for o in owners):
            if m.kind == "field" and m.group and any(
                    self.visible.get(g.name) is not m.cls for g in m.group):
                raise Unsupported("fields declared together are partly hidden",
                                  "declare each data member on its own line", where)
            if m.pure:
                raise PreconditionFailed(1, "abstract",
                                         f"{self.T.key} is abstract: {m.qualified} is pure "
                                         "virtual and not overridden",
                                         f"override {m.name} in the hierarchy of {self.T.key}",
                                         where)
            self.copied.append(m)
        elif any(o is m.cls for o in owners):
            raise Unsupported(f"{m.qualified}: some of the names it declares are hidden",
                              "give the enumerators distinct names", where)
        else:
            self.dropped.append(m)

    def kept_visible(self, m: Member) -> bool:
        if m.cls.is_target:
            return True
        return m in self.copied and all(self.visible.get(n) is m.cls for n in m.names)

    def _static_refs(self) -> None:
        """`base::name` outside the hierarchy, naming a static member, nested type or
        enumerator of a base: the flat class has the same member, so where the base goes away
        the qualifier becomes the target. The member must be the one lookup in the target finds,
        and public there."""
        for n, c, named in self.outside.static_refs:
            m = self.h.member_of(named)
            if m is None and named.kind == CK.ENUM_CONSTANT_DECL:
                m = self.h.member_of(named.semantic_parent)
            if not self.class_removed(c):
                continue
            if m is None or not self.kept_visible(m) or \
                    self.h.effective_access(m) != "public":
                why = "hidden in" if m is not None and not self.kept_visible(m) else \
                    "not a public member of"
                raise PreconditionFailed(
                    2, "base-named",
                    f"base class {c.key} of {self.T.key} is named outside the hierarchy "
                    f"({c.key}::{named.spelling}, which is {why} the flat {self.T.key})",
                    f"refer to the member through {self.T.key}, or rename it", cx.presumed(n))
            f = cx.file_of(n)
            s, e = cx.span(n)
            text = self.src.text(f, s, e)
            if text != c.name:
                raise Unsupported(f"{c.key} is named through a macro or typedef ('{text}')",
                                  "write the class name, or flatten the preprocessed file",
                                  cx.presumed(n), code="unsupported-macro")
            q = self._qualifier_start(f, s)
            spell = self.t_spell_at(n) if q == s else "::" + self.t_qualified
            self.edits.replace(f, q, e, spell, f"{c.key}::{named.spelling} -> target")
            if self.include_target and f == self.main_file:
                self._ensure_include(f)

    # ==== step 3: references in hierarchy code =============================================
    def region_edits(self, region: ci.Cursor, ctx: Ctx) -> list[Edit]:
        key = (cx.loc_key(region), ctx.ctor_of is not None)
        if key not in self._region_cache:
            self._region_cache[key] = self._compute_region_edits(region, ctx)
        return self._region_cache[key]

    def _compute_region_edits(self, region: ci.Cursor, ctx: Ctx) -> list[Edit]:
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
                self._type_ref(n, ctx, params, edits)
            elif k == CK.TEMPLATE_REF:
                self._template_ref(n, ctx, params, edits, re_)
            elif k == CK.DECL_REF_EXPR and n.referenced is not None and \
                    n.referenced.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
                arg = params.get(cx.loc_key(n.referenced))
                if arg is not None:
                    edits.append(Edit(f, s, e, _paren(arg), "template argument"))
            if not ctx.cls.is_target and self._enclosing_keys(ctx.cls) and \
                    k in _SCOPE_REF_KINDS:
                self._enclosing_ref(n, parents, region, ctx, edits)
            if not ctx.cls.is_target and self._t_scope_names() and \
                    k in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR,
                          CK.OVERLOADED_DECL_REF):
                self._hijacked(n, ctx)
            if k in (CK.MEMBER_REF_EXPR, CK.DECL_REF_EXPR, CK.MEMBER_REF):
                self._member_ref(n, ctx, edits)
            elif k in (CK.CXX_OVERRIDE_ATTR, CK.CXX_FINAL_ATTR) and parents and \
                    parents[-1] == region:
                prev = self.src.prev_token(f, s)
                edits.append(Edit(f, prev.end if prev else s, e, "", "drop override/final"))
            elif k == CK.CXX_THIS_EXPR and not ctx.cls.is_target:
                self._this_escape(n, parents, ctx)
            elif k == CK.VAR_DECL:
                inner, indirect = cx.strip_type(n.type)
                c = self.h.classes.get(cx.record_key(inner) or "")
                if c is not None and not c.is_target and not indirect:
                    raise PreconditionFailed(
                        2, "base-instance",
                        f"variable '{n.spelling}' is an instance of base class {c.key} "
                        f"inside the hierarchy of {self.T.key}",
                        f"instantiate only {self.T.key}", cx.presumed(n))
        return drop_contained(edits)

    # ---- classes nested in another class ----------------------------------------------------
    def _enclosing_keys(self, c: ClassInfo) -> dict[Key, ci.Cursor]:
        """The classes `c` is nested in (its enclosing classes, innermost first), by key."""
        if c.key not in self._enclosing_cache:
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
            self._enclosing_cache[c.key] = out
        return self._enclosing_cache[c.key]

    def _scope_spelling(self, e: ci.Cursor) -> str:
        """How code in the target's namespace names the class `e`."""
        parts = qualified_decl_name(e).split("::")
        ns = [n for n in self._namespaces(e, semantic=True) if n]
        if self.t_namespaces[:len(ns)] == ns:
            return "::".join(parts[len(ns):])
        return "::" + "::".join(parts)

    def _t_inside(self, e: ci.Cursor) -> bool:
        """Whether the target is nested in `e` (it then has the access `e`'s members grant)."""
        k = cx.key_of(e)
        p = self.T.decl.semantic_parent
        while p is not None and p.kind in cx.RECORD_KINDS:
            if cx.key_of(p) == k:
                return True
            p = p.semantic_parent
        return False

    def _t_friend_of(self, e: ci.Cursor) -> bool:
        tk = cx.key_of(self.T.decl)
        for ch in e.get_children():
            if ch.kind != CK.FRIEND_DECL:
                continue
            for r in ch.get_children():
                d = r.referenced if r.kind == CK.TYPE_REF else r
                if d is not None and cx.key_of(d) == tk:
                    return True
        return False

    def _enclosing_ref(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...], region: ci.Cursor,
                       ctx: Ctx, edits: list[Edit]) -> None:
        """Code of a class nested in another class E (`class Outer::Walker`) sees E's names
        unqualified, and E's private members. In the target it does not: qualify the name
        with E's, and refuse when E's member is not accessible from the target."""
        d = n.referenced
        if d is None or d.kind == CK.CONSTRUCTOR and n.kind != CK.CALL_EXPR:
            return
        enclosing = self._enclosing_keys(ctx.cls)
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
                and not self._t_inside(e) and not self._t_friend_of(e):
            access = "private" if access_decl.access_specifier == \
                ci.AccessSpecifier.PRIVATE else "protected"
            name = qualified_decl_name(e) + "::" + (e.spelling if d.kind == CK.CONSTRUCTOR
                                                   else d.spelling)
            raise Unsupported(f"{ctx.cls.key} is nested in {qualified_decl_name(e)} and uses "
                              f"its {access} member {name}, which {self.T.key} cannot access",
                              f"declare {self.T.key} a friend of {qualified_decl_name(e)}, or "
                              f"make {name} public", cx.presumed(n),
                              code="unsupported-enclosing-access")
        if n.kind not in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.DECL_REF_EXPR):
            return
        if parents and parents[-1] == region and cx.is_name_qualifier(n, region):
            return
        f = cx.file_of(n)
        s = n.location.offset if n.kind == CK.DECL_REF_EXPR else cx.span(n)[0]
        toks = self.src.tokens(f, s, s + 256)
        if not toks or toks[0].kind != ci.TokenKind.IDENTIFIER or toks[0].spelling != d.spelling:
            return
        if self._qualifier_start(f, s) != s:
            return      # written qualified: the qualifier names E or a class in it
        prev = self.src.prev_token(f, s, 64)
        if prev is not None and prev.spelling in (".", "->", "~"):
            return
        scope = self._scope_spelling(e)
        text = f"{scope}::{d.spelling}" if member else scope
        if text != d.spelling:
            edits.append(Edit(f, s, toks[0].end, text, "name of the enclosing class"))

    def _t_scope_names(self) -> dict[str, tuple[ci.Cursor, ci.Cursor]]:
        """The names the classes the target is nested in declare (their members and their
        bases' members), each with the class and the member: lookup in the target finds them
        before any namespace-scope name."""
        if self._scope_names is None:
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

            p = self.T.decl.semantic_parent
            while p is not None and p.kind in cx.RECORD_KINDS:
                d = p.get_definition() or p
                names.setdefault(d.spelling, (d, d))    # its injected class name
                add(d, d, 0)
                p = p.semantic_parent
            self._scope_names = names
        return self._scope_names

    def _hijacked(self, n: ci.Cursor, ctx: Ctx) -> None:
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
        found = self._t_scope_names().get(name)
        if found is None:
            return
        owner, member = found
        if r is not None and cx.key_of(member) == cx.key_of(r):
            return      # the same entity
        f = cx.file_of(n)
        s = n.location.offset if n.kind != CK.TYPE_REF else cx.span(n)[0]
        if self._qualifier_start(f, s) != s:
            return
        prev = self.src.prev_token(f, s, 64)
        if prev is not None and prev.spelling in (".", "->"):
            return
        outer = qualified_decl_name(owner)
        raise Unsupported(f"code of {ctx.cls.key} names '{name}' of its namespace, but in "
                          f"{self.T.key}, nested in {outer}, '{name}' would mean "
                          f"{outer}::{name}",
                          f"qualify the name in {ctx.cls.key} (::{qualified_decl_name(r)})"
                          if r is not None else f"qualify the name in {ctx.cls.key}",
                          cx.presumed(n), code="unsupported-hidden-by-enclosing")

    def _this_escape(self, n: ci.Cursor, parents: tuple[ci.Cursor, ...], ctx: Ctx) -> None:
        """Warn when base-class code converts `this` to a type outside the hierarchy (say
        const void*): it was the address of the base subobject, it becomes the object's."""
        if not parents or parents[-1].kind != CK.UNEXPOSED_EXPR:
            return
        c, _ = cx.strip_type(parents[-1].type)
        if cx.record_key(c) in self.h.classes:
            return
        offset = self.layout.order_key(ctx.cls.key) if self.layout else None
        if offset is not None and offset[1] == 0 and offset[0] == 0:
            return
        where = cx.presumed(n)
        msg = (f"{where}: code of {ctx.cls.key} converts 'this' to "
               f"'{parents[-1].type.spelling}': it was the address of the {ctx.cls.key} "
               f"subobject, after flattening it is the address of the whole "
               f"{self.T.key}")
        if msg not in self.warnings:
            self.warnings.append(msg)

    def class_ref(self, n: ci.Cursor, ctx: Ctx) -> ClassInfo | None:
        r = n.referenced
        if r is None:
            return None
        c = self.h.by_loc.get(cx.loc_key(r))
        if c is None:
            return None
        if c.template is None:
            return c
        tk = cx.record_key(n.type)
        if tk == c.key:
            return c
        if ctx.cls is c:
            selfname = cx.normalize_type_name(
                c.name + "<" + ",".join(p.spelling for p in c.params) + ">")
            if cx.normalize_type_name(n.type.spelling) in (selfname, c.name):
                return c
        return None

    def _qualifier_start(self, f: str, start: int) -> int:
        """Extend `start` back over a nested-name-specifier (ns:: or ::) written before it."""
        while True:
            prev = self.src.prev_token(f, start, 256)
            if prev is None or prev.spelling != "::":
                return start
            before = self.src.prev_token(f, prev.start, 256)
            if before is not None and before.kind == ci.TokenKind.IDENTIFIER:
                start = before.start
            else:
                return prev.start

    def _type_ref(self, n: ci.Cursor, ctx: Ctx, params: dict, edits: list[Edit]) -> None:
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
        c = self.class_ref(n, ctx)
        if c is not None and c.is_target:
            return
        if c is not None:
            text = self.src.text(f, s, e)
            if text != c.name and text != self.T.name:
                raise Unsupported(f"{c.key} is named through a macro or typedef "
                                  f"('{text}') in hierarchy code",
                                  "write the class name, or flatten the preprocessed file",
                                  cx.presumed(n), code="unsupported-macro")
            q = self._qualifier_start(f, s)
            spell = ctx.t_spell
            edits.append(Edit(f, q, e, spell, "base type -> target"))
            return
        m = self.h.member_of(r)
        if m is not None and m.kind == "type" and not self.kept_visible(m):
            self._hidden_used(m, n)

    def _template_ref(self, n: ci.Cursor, ctx: Ctx, params: dict, edits: list[Edit],
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
        c = self.template_classes.get(cx.key_of(r))
        if c is None:
            return
        toks = self.src.tokens(f, e, max(limit, e + 1))
        if not toks or toks[0].spelling != "<":
            return
        j = cx.matching_angle(toks, 0)
        args = []
        for part in cx.split_top_level(toks[1:j]):
            words = []
            for t in part:
                if t.kind == ci.TokenKind.IDENTIFIER:
                    sub = next((params[k] for k in params
                                if self._param_name(k) == t.spelling), None)
                    words.append(sub if sub is not None else t.spelling)
                else:
                    words.append(t.spelling)
            args.append(cx.normalize_type_name("".join(words)))
        if args != [cx.normalize_type_name(a) for a in c.args]:
            return
        q = self._qualifier_start(f, s)
        spell = ctx.t_spell
        edits.append(Edit(f, q, toks[j].end, spell, "base template-id -> target"))

    def _param_name(self, key: Key) -> str | None:
        for c in self.h.classes.values():
            for p in c.params:
                if cx.loc_key(p) == key:
                    return p.spelling
        f, off = key
        tok = self.src.next_token(f, off, 128)
        return tok.spelling if tok else None

    def _hidden_used(self, m: Member, n: ci.Cursor) -> None:
        vis = self.visible.get(m.name)
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

    def _on_this(self, n: ci.Cursor) -> bool:
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

    def _member_ref(self, n: ci.Cursor, ctx: Ctx, edits: list[Edit]) -> None:
        r = n.referenced
        if r is None:
            return
        if r.kind == CK.ENUM_CONSTANT_DECL:
            m = self.h.member_of(r.semantic_parent)
            if m is not None and not self.kept_visible(m):
                self._hidden_used(m, n)
            return
        m = self.h.member_of(r)
        if m is None:
            return
        if m.kind in ("field", "static"):
            if not self.kept_visible(m) and n.kind != CK.MEMBER_REF:
                self._hidden_used(m, n)
            return
        if m.kind != "method":
            return
        f = cx.file_of(n)
        name_start = n.location.offset
        quals = [c for c in n.get_children()
                 if c.kind in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF)
                 and cx.span(c)[0] < name_start]
        prev = self.src.prev_token(f, name_start, 64)
        qualified = bool(quals) or (prev is not None and prev.spelling == "::")
        if m.virtual and not qualified:
            context = ctx.ctor_of if ctx.ctor_of is not None and self._on_this(n) else None
            target = self.h.final_overrider(m, context)
        else:
            target = m
        if self.kept_visible(target):
            return
        new = self.rename(target)
        name_end = self._name_end(f, name_start, n)
        start = min([cx.span(q)[0] for q in quals] + [name_start])
        start = self._qualifier_start(f, start)
        edits.append(Edit(f, start, name_end, new, f"call of renamed copy {new}"))

    def _name_end(self, f: str, start: int, where: ci.Cursor) -> int:
        toks = self.src.tokens(f, start, start + 64)
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

    def rename(self, m: Member) -> str:
        """The name of the renamed copy of a hidden member (scheduling the copy)."""
        if m.key not in self.renames:
            base = m.name
            if base.startswith("operator"):
                op = base[len("operator"):].strip()
                base = "operator_" + _OPERATOR_WORDS.get(op, "op")
            self.renames[m.key] = self.unique_name(f"{m.cls.name}_{base}")
            self._queue.append(m)
        return self.renames[m.key]

    # ==== head edits: virtual, override, final, names ======================================
    def head_edits(self, m: Member, cursor: ci.Cursor, start: int,
                   new_name: str | None) -> list[Edit]:
        f = cx.file_of(cursor)
        name_off = cursor.location.offset
        out: list[Edit] = []
        toks = self.src.tokens(f, start, max(name_off, start))
        for i, t in enumerate(toks):
            if t.spelling == "virtual" and t.kind == ci.TokenKind.KEYWORD:
                nxt = toks[i + 1].start if i + 1 < len(toks) else name_off
                out.append(Edit(f, t.start, nxt, "", "drop virtual"))
        if new_name is not None:
            out.append(Edit(f, name_off, self._name_end(f, name_off, cursor), new_name,
                            "renamed copy"))
        return out

    def member_unit(self, m: Member) -> tuple[int, int]:
        """The member's bytes, extended over attributes written before it."""
        start, end = m.group[0].unit if m.group else m.unit
        f = cx.file_of(m.cursor)
        for c in m.cursor.get_children():
            if c.kind.is_attribute() and cx.file_of(c) == f:
                s = cx.span(c)[0]
                if s < start:
                    start = s
        toks = self.src.tokens(f, max(0, start - 32), start)
        if len(toks) >= 2 and toks[-1].spelling == "[" and toks[-2].spelling == "[":
            start = toks[-2].start
        elif len(toks) >= 3 and toks[-1].spelling == "(" and toks[-2].spelling == "(" and \
                toks[-3].spelling == "__attribute__":
            start = toks[-3].start
        return start, end

    # ==== constructors and destructors ======================================================
    def ctor_def(self, d: ci.Cursor | None) -> CtorDef | None:
        if d is None:
            return None
        key = cx.loc_key(d)
        if key in self._ctor_cache:
            return self._ctor_cache[key]
        f = cx.file_of(d)
        toks = self.src.cursor_tokens(d)
        name_off = d.location.offset
        i = next((k for k, t in enumerate(toks) if t.start >= name_off and t.spelling == "("),
                 None)
        if i is None:
            self._ctor_cache[key] = None
            return None
        j = cx.matching(toks, i)
        body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
        body_start = cx.span(body)[0] if body is not None else toks[-1].end
        colon = None
        default_range = None
        head_end = toks[j].end
        k = j + 1
        depth = 0
        while k < len(toks) and toks[k].start < body_start:
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
                default_range = (t.start, toks[k + 1].end)
                break
            head_end = t.end
            k += 1
        items: list[Item] = []
        if colon is not None:
            ctoks = [t for t in toks if colon.end <= t.start < body_start]
            kids = list(d.get_children())
            for part in cx.split_top_level(ctoks):
                if not part:
                    continue
                items.append(self._item(d, f, part, kids))
        ctor = CtorDef(d, f, toks[i - 1] if i > 0 else toks[0], toks[i], toks[j], colon,
                       items, body, default_range, head_end)
        self._ctor_cache[key] = ctor
        return ctor

    def _item(self, d: ci.Cursor, f: str, part: list[Tok], kids: list[ci.Cursor]) -> Item:
        b = next((x for x, t in enumerate(part) if t.spelling in ("(", "{")), None)
        if b is None:
            raise Unsupported("a mem-initializer without parentheses or braces",
                              "simplify the constructor", cx.presumed(d))
        close = cx.matching(part, b)
        start, end = part[0].start, part[close].end
        inner = (part[b].end, part[close].start)
        args = [(p[0].start, p[-1].end) for p in cx.split_top_level(part[b + 1:close]) if p]
        item = Item("member", start, end, part[b].spelling, inner, args)
        name_end = part[b].start
        for c in kids:
            cs = cx.span(c)[0]
            if not (start <= cs < name_end):
                if c.kind == CK.CALL_EXPR and cs == start and item.ctor is None:
                    item.ctor = c.referenced
                continue
            if c.kind == CK.MEMBER_REF:
                item.field = self.h.member_of(c.referenced)
                item.kind = "member"
            elif c.kind in (CK.TYPE_REF, CK.TEMPLATE_REF):
                cls = None
                if c.kind == CK.TYPE_REF:
                    r = c.referenced
                    cls = self.h.classes.get(cx.record_key(c.type) or "") or \
                        self.h.by_loc.get(cx.loc_key(r) if r is not None else None)
                else:
                    r = c.referenced
                    cls = self.template_classes.get(cx.key_of(r) if r is not None else None)
                if cls is not None:
                    item.cls = cls
                    item.kind = "base"
            elif c.kind == CK.CALL_EXPR and cs == start:
                item.ctor = c.referenced
        if item.kind == "base" and item.cls is not None and \
                self._owner(d) is item.cls:
            item.kind = "delegate"
        return item

    def _owner(self, d: ci.Cursor) -> ClassInfo | None:
        m = self.h.member_of(d)
        return m.cls if m is not None else None

    def definition_of(self, m: Member) -> ci.Cursor | None:
        if m.has_inline_body or m.defaulted or m.deleted:
            return m.cursor
        for d in m.defs:
            if any(c.kind == CK.COMPOUND_STMT for c in d.get_children()):
                return d
            toks = self.src.cursor_tokens(d)
            if any(t.spelling == "default" for t in toks):
                return d
        return None

    def user_ctor(self, m: Member | None) -> bool:
        return m is not None and m.kind in ("ctor", "dtor") and not m.defaulted \
            and not m.deleted

    def default_ctor(self, c: ClassInfo) -> Member | None:
        for m in c.members:
            if m.kind == "ctor" and m.cursor.is_default_constructor():
                return m
        return None

    def dtor_of(self, c: ClassInfo) -> Member | None:
        return next((m for m in c.members if m.kind == "dtor"), None)

    def construct_calls(self, b: ClassInfo, item: Item | None, ctx: Ctx | None) -> list[Call]:
        """Calls that construct the non-virtual part of subobject `b` (its virtual bases are
        constructed by the most derived class)."""
        chosen: Member | None = None
        if item is not None and item.ctor is not None:
            chosen = self.h.member_of(item.ctor)
        elif item is None or not item.args:
            chosen = self.default_ctor(b)
        if chosen is not None and self.user_ctor(chosen):
            return [Call(chosen, item, ctx)] if not self.init_is_empty(chosen) else []
        if item is not None and item.args:
            raise Unsupported(f"{b.key} is initialized from an argument by its implicit "
                              "(copy) constructor",
                              "initialize the base with a user-provided constructor",
                              self._item_loc(item), code="unsupported-base-copy")
        out: list[Call] = []
        for e in b.bases:
            if not e.virtual:
                out += self.construct_calls(e.cls, None, None)
        return out

    def _item_loc(self, item: Item):
        for cd in self._ctor_cache.values():
            if cd is not None and item in cd.items:
                tu = self.src.tu
                loc = ci.SourceLocation.from_offset(tu, tu.get_file(cd.file), item.start)
                return cx.presumed(loc)
        return None

    def init_is_empty(self, k: Member) -> bool:
        """Whether the init function of base constructor/destructor `k` would do nothing
        (decided where its definition is; other units learn it through the seeds)."""
        if k.key in self._empty_cache:
            return self._empty_cache[k.key]
        self._empty_cache[k.key] = False
        d = self.definition_of(k)
        if d is None:
            empty = self.seeds.empty.get(k.key, False)
            self._empty_cache[k.key] = empty
            return empty
        cd = self.ctor_def(d) if k.kind == "ctor" else None
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
                    calls += self.construct_calls(e.cls, it, None)
            empty = not calls
        self._empty_cache[k.key] = empty
        self._empty_known[k.key] = empty
        return empty

    def prologue(self, cd: CtorDef | None) -> list[Call]:
        """The init-function calls that replace the base construction of a target ctor."""
        items = cd.items if cd is not None else []
        if any(i.kind == "delegate" for i in items):
            return []
        ctx = Ctx(self.T, None, (), self.T.name) if cd is None else \
            self.ctx_for(self.h.member_of(cd.cursor) or self._dummy_member(cd.cursor),
                         cd.cursor, False)
        calls: list[Call] = []
        for v in self.h.vbase_order:
            it = next((i for i in items if i.kind == "base" and i.cls is v), None)
            calls += self.construct_calls(v, it, ctx)
        for e in self.T.bases:
            if not e.virtual:
                it = next((i for i in items if i.kind == "base" and i.cls is e.cls), None)
                calls += self.construct_calls(e.cls, it, ctx)
        return calls

    def _dummy_member(self, cursor: ci.Cursor) -> Member:
        return Member(self.T, cursor, "ctor", self.T.name, [], "public")

    def destroy_calls(self, b: ClassInfo) -> list[Member]:
        out: list[Member] = []
        d = self.dtor_of(b)
        if d is not None and self.user_ctor(d) and not self.init_is_empty(d):
            out.append(d)
        for e in reversed(b.bases):
            if not e.virtual:
                out += self.destroy_calls(e.cls)
        return out

    def epilogue(self) -> list[Member]:
        out: list[Member] = []
        for e in reversed(self.T.bases):
            if not e.virtual:
                out += self.destroy_calls(e.cls)
        for v in reversed(self.h.vbase_order):
            out += self.destroy_calls(v)
        return out

    def init_name(self, k: Member) -> str:
        if k.key not in self.init_names:
            suffix = "ctor" if k.kind == "ctor" else "dtor"
            same = next((n for kk, n in self.init_names.items()
                         if self.h.members[kk].cls is k.cls
                         and self.h.members[kk].kind == k.kind), None)
            self.init_names[k.key] = same or self.unique_name(f"{k.cls.name}_{suffix}")
        return self.init_names[k.key]

    def call_text(self, call: Call) -> str:
        name = self.init_name(call.member)
        if call.member.kind == "dtor":
            return f"{name}();"
        args = ""
        if call.item is not None and call.item.args:
            cd_cursor = self._item_region(call)
            edits = self.region_edits(cd_cursor, call.ctx) if call.ctx else []
            f = self._item_file(call)
            s, e = call.item.inner
            args = apply_to_slice(self.src.data(f), s, e, edits).strip()
        return f"{name}({args});"

    def _item_region(self, call: Call) -> ci.Cursor:
        for cd in self._ctor_cache.values():
            if cd is not None and call.item in cd.items:
                return cd.cursor
        raise AssertionError("mem-initializer without its constructor")

    def _item_file(self, call: Call) -> str:
        for cd in self._ctor_cache.values():
            if cd is not None and call.item in cd.items:
                return cd.file
        raise AssertionError("mem-initializer without its constructor")

    def assignment(self, item: Item, edits: list[Edit], f: str) -> str | None:
        """A statement that does what the mem-initializer `item` did, after the fact."""
        fm = item.field
        if fm is None:
            return None
        data = self.src.data(f)
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

    # ==== generation ========================================================================
    def run(self) -> FlattenPlan:
        self.select()
        self._static_refs()
        t_ctors = [m for m in self.T.members if m.kind == "ctor"]
        t_dtor = self.dtor_of(self.T)
        # init functions: every user-provided base constructor/destructor that does something
        inits: list[Member] = []
        for c in self.h.construction_order:
            if c.is_target:
                continue
            for m in c.members:
                if m.kind in ("ctor", "dtor") and self.user_ctor(m) and \
                        not self.init_is_empty(m):
                    inits.append(m)
                    self.init_name(m)
        # renamed copies other units asked for
        for key, name in sorted(self.seeds.renames.items()):
            m = self.h.members.get(key)
            if m is not None and key not in self.renames:
                self.renames[key] = name
                self._queue.append(m)
        # the regions whose references are rewritten
        for m in self.T.members:
            self._queue.append(m)
        self._queue.extend(self.copied)
        self._queue.extend(inits)
        done: set[Key] = set()
        while self._queue:
            m = self._queue.pop(0)
            if (m.key, m.kind) in done:
                continue
            done.add((m.key, m.kind))
            is_init = m.kind in ("ctor", "dtor")
            self.region_edits(m.cursor, self.ctx_for(m, m.cursor, True, ctor=is_init))
            for d in m.defs:
                self.region_edits(d, self.ctx_for(m, d, False, ctor=is_init))
        # T's constructors (their definitions in this unit)
        prologues: dict[Key, list[Call]] = {}
        for m in t_ctors:
            if m.deleted:
                continue
            d = self.definition_of(m)
            if d is None:
                continue
            cd = self.ctor_def(d)
            prologues[cx.loc_key(d)] = self.prologue(cd)
        default_prologue = self.prologue(None) if not t_ctors else []
        if default_prologue and any(
                self.default_ctor(e.cls) is None and any(
                    mm.kind == "ctor" for mm in e.cls.members)
                for e in self.T.bases):
            default_prologue = []   # the target had no default constructor
        epilogue = self.epilogue()
        self._flush_renamed()
        self._edit_target(t_ctors, t_dtor, inits, prologues, default_prologue, epilogue)
        self._edit_bases()
        facts = Facts(dict(self.renames), dict(self._empty_known))
        return FlattenPlan(self.edits, self._report(inits, epilogue), self.warnings, facts)

    def _flush_renamed(self) -> None:
        done: set[Key] = set()
        while True:
            pending = [m for m in self._queue if m.key not in done]
            self._queue.clear()
            if not pending:
                break
            for m in pending:
                done.add(m.key)
                self.region_edits(m.cursor, self.ctx_for(m, m.cursor, True))
                for d in m.defs:
                    self.region_edits(d, self.ctx_for(m, d, False))

    # ---- the target class -----------------------------------------------------------------
    def _indent(self, cursor: ci.Cursor) -> str:
        return " " * max(cursor.extent.start.column - 1, 0)

    def _edit_target(self, t_ctors, t_dtor, inits, prologues, default_prologue,
                     epilogue) -> None:
        tdecl = self.T.decl
        f = self.t_file
        toks = self.src.cursor_tokens(tdecl)
        name_off = tdecl.location.offset
        ni = next(i for i, t in enumerate(toks) if t.start >= name_off)
        lb = next(i for i in range(ni, len(toks)) if toks[i].spelling == "{")
        colon = next((i for i in range(ni, lb) if toks[i].spelling == ":"), None)
        if colon is not None:
            self.edits.replace(f, toks[colon - 1].end, toks[lb].start, " ", "drop bases")
        members = [m for m in self.T.members]
        indent = self._indent(members[0].cursor) if members else \
            self._indent(tdecl) + "    "
        # T's own members: references, virtual/override/final
        for m in members:
            ctx = self.ctx_for(m, m.cursor, True)
            es = list(self.region_edits(m.cursor, ctx))
            es += self.head_edits(m, m.cursor, self.member_unit(m)[0], None)
            self.edits.extend(drop_contained(es))
            for d in m.defs:
                es = list(self.region_edits(d, self.ctx_for(m, d, False)))
                self.edits.extend(drop_contained(es))
        # constructors and destructor of T
        for m in t_ctors:
            d = self.definition_of(m)
            if d is None or m.deleted:
                continue
            self._edit_target_ctor(self.ctor_def(d), prologues.get(cx.loc_key(d), []))
        if t_dtor is not None and epilogue:
            d = self.definition_of(t_dtor)
            if d is not None:
                self._edit_target_dtor(d, epilogue)
        # the block of copied members after '{'
        top = self._top_block(indent, inits, default_prologue if not t_ctors else [],
                              epilogue if t_dtor is None else [])
        if top:
            self.edits.insert(f, toks[lb].end, top, "copied members")
        bottom = self._bottom_block(indent)
        if bottom:
            rb = toks[-1]
            line_start = self.src.data(f).rfind(b"\n", 0, rb.start) + 1
            at = line_start if not self.src.data(f)[line_start:rb.start].strip() else rb.start
            self.edits.insert(f, at, bottom, "virtual-base data members")

    def _edit_target_ctor(self, cd: CtorDef | None, calls: list[Call]) -> None:
        if cd is None:
            return
        f = cd.file
        region = cd.cursor
        ctx = self.ctx_for(self.h.member_of(region) or self._dummy_member(region), region,
                           region in [m.cursor for m in self.T.members])
        edits = self.region_edits(region, ctx)
        removed = [i for i in cd.items if i.kind == "base"]
        kept = [i for i in cd.items if i.kind != "base"]
        moved: list[str] = []
        state_refs = [i for i in kept if i.kind == "member" and self._reads_hierarchy(cd, i)]
        if calls and state_refs:
            for i in state_refs:
                text = self.assignment(i, edits, f)
                if text:
                    moved.append(text)
            removed += state_refs
            kept = [i for i in kept if i not in state_refs]
        if removed:
            if not kept:
                self.edits.replace(f, cd.colon.start, cx.span(cd.body)[0], "",
                                   "drop base initializers")
                prev = self.src.prev_token(f, cd.colon.start)
                if prev is not None:
                    self.edits.replace(f, prev.end, cd.colon.start, " ", "space")
            else:
                order = cd.items
                last_kept = max(order.index(i) for i in kept)
                tail_start = None
                for idx, it in enumerate(order):
                    if it in kept:
                        continue
                    if idx < last_kept:
                        self.edits.delete(f, it.start, order[idx + 1].start,
                                          "drop base initializer")
                    elif tail_start is None:
                        tail_start = order[last_kept].end
                if tail_start is not None:
                    self.edits.delete(f, tail_start, order[-1].end, "drop base initializers")
        lines = [self.call_text(c) for c in calls] + moved
        if not lines:
            return
        outer = self._indent(region)
        if cd.default_range is not None:
            s, e = cd.default_range
            body = "".join(f"\n{outer}    {ln}" for ln in lines)
            self.edits.replace(f, s, e, "{" + body + "\n" + outer + "}",
                               "defaulted constructor")
            return
        if cd.body is None:
            return
        self._body_edits(f, cd.body, lines, [], outer)
        if self._is_constexpr(cd.cursor):
            tok = next(t for t in self.src.cursor_tokens(cd.cursor) if t.spelling == "constexpr")
            nxt = self.src.next_token(f, tok.end)
            self.edits.delete(f, tok.start, nxt.start if nxt else tok.end, "drop constexpr")
            self.warnings.append(f"{cx.presumed(cd.cursor)}: constructor of {self.T.key} is no "
                                 "longer constexpr (base members are assigned in its body)")

    def _body_edits(self, f: str, body: ci.Cursor, head: list[str], tail: list[str],
                    outer: str) -> None:
        """Put statements at the start (`head`) and the end (`tail`) of a compound statement,
        editing only whitespace so that the edits inside the body stay valid."""
        data = self.src.data(f)
        bs, be = cx.span(body)
        close = be - 1
        ind = outer + "    "
        inner = data[bs + 1:close]
        if b"\n" not in inner:
            if not inner.strip():
                text = "".join(f"\n{ind}{ln}" for ln in head + tail)
                self.edits.replace(f, bs + 1, close, text + "\n" + outer, "body statements")
                return
            first = bs + 1 + (len(inner) - len(inner.lstrip()))
            last = close - (len(inner) - len(inner.rstrip()))
            self.edits.replace(f, bs + 1, first,
                               "".join(f"\n{ind}{ln}" for ln in head) + "\n" + ind,
                               "body head")
            self.edits.replace(f, last, close,
                               "".join(f"\n{ind}{ln}" for ln in tail) + "\n" + outer,
                               "body tail")
            return
        if head:
            self.edits.insert(f, bs + 1, "".join(f"\n{ind}{ln}" for ln in head), "body head")
        if tail:
            line_start = data.rfind(b"\n", 0, close) + 1
            if not data[line_start:close].strip():
                self.edits.insert(f, line_start, "".join(f"{ind}{ln}\n" for ln in tail),
                                  "body tail")
            else:
                self.edits.insert(f, close, "".join(f"\n{ind}{ln}" for ln in tail) + "\n"
                                  + outer, "body tail")

    @staticmethod
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

    def _is_constexpr(self, d: ci.Cursor) -> bool:
        name_off = d.location.offset
        return any(t.spelling == "constexpr" and t.start < name_off
                   for t in self.src.cursor_tokens(d))

    def _reads_hierarchy(self, cd: CtorDef, item: Item) -> bool:
        for n in cx.walk(cd.cursor):
            s, e = cx.span(n)
            if s < item.inner[0] or e > item.inner[1]:
                continue
            if n.kind == CK.CXX_THIS_EXPR:
                return True
            if n.kind in (CK.MEMBER_REF_EXPR, CK.DECL_REF_EXPR) and \
                    self.h.member_of(n.referenced) is not None:
                return True
        return False

    def _edit_target_dtor(self, d: ci.Cursor, calls: list[Member]) -> None:
        f = cx.file_of(d)
        outer = self._indent(d)
        lines = [f"{self.init_name(c)}();" for c in calls]
        body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
        if body is None:
            toks = self.src.cursor_tokens(d)
            i = next((k for k, t in enumerate(toks) if t.spelling == "default"), None)
            if i is None:
                return
            text = "".join(f"\n{outer}    {ln}" for ln in lines)
            self.edits.replace(f, toks[i - 1].start, toks[i].end,
                               "{" + text + "\n" + outer + "}", "defaulted dtor")
            return
        if any(n.kind == CK.RETURN_STMT for n in cx.walk(body)):
            raise Unsupported(f"the destructor of {self.T.key} returns early",
                              "remove the return statement so the base destructors run",
                              cx.presumed(d), code="unsupported-dtor-return")
        self._body_edits(f, body, [], lines, outer)

    def _access_line(self, indent: str, access: str) -> str:
        outer = indent[:-4] if len(indent) >= 4 else ""
        return f"{outer}{access}:\n"

    def _top_block(self, indent: str, inits: list[Member], default_prologue: list[Call],
                   epilogue: list[Member]) -> str:
        out: list[str] = ["\n"]
        cur: list[str | None] = [None]

        def emit(access: str, text: str) -> None:
            if access != cur[0]:
                out.append(self._access_line(indent, access))
                cur[0] = access
            out.append(indent + text.strip("\n") + "\n")

        bases = [c for c in self.h.construction_order if not c.is_target]
        for c in bases:
            mems = [m for m in c.members if m in self.copied and m.kind not in ("field",)]
            if not mems:
                continue
            out.append(f"{indent}// flattened from {c.key}\n")
            for m in mems:
                emit(self.h.effective_access(m), self._member_copy_text(m, None))
        # renamed copies of hidden members and init functions
        extra = [self.h.members[k] for k in sorted(self.renames)]
        if extra or inits:
            out.append(f"{indent}// base versions and base constructors/destructors\n")
        for m in extra:
            emit("private", self._member_copy_text(m, self.renames[m.key]))
        for k in inits:
            emit("private", self._init_text(k, indent))
        # data members in layout order (non-virtual part)
        fields = self._fields(virtual_part=False)
        if fields:
            out.append(f"{indent}// data members of the base classes, in layout order\n")
        for m in fields:
            emit(self.h.effective_access(m), self._member_copy_text(m, None))
        if default_prologue:
            calls = " ".join(self.call_text(c) for c in default_prologue)
            emit("public", f"{self.T.name}() {{ {calls} }}")
        if epilogue:
            calls = " ".join(f"{self.init_name(c)}();" for c in epilogue)
            emit("public", f"~{self.T.name}() {{ {calls} }}")
        if cur[0] is None:
            return ""
        first = next((c for c in self.T.body.get_children()
                      if c.kind != CK.CXX_BASE_SPECIFIER and not c.kind.is_attribute()), None)
        starts_with_access = first is not None and first.kind == CK.CXX_ACCESS_SPEC_DECL
        if cur[0] != self.T.default_access and not starts_with_access:
            out.append(self._access_line(indent, self.T.default_access))
        return "".join(out).rstrip("\n")

    def _bottom_block(self, indent: str) -> str:
        fields = self._fields(virtual_part=True)
        if not fields:
            return ""
        out = [f"{indent}// data members of the virtual base classes, in layout order\n"]
        cur = None
        for m in fields:
            a = self.h.effective_access(m)
            if a != cur:
                out.append(self._access_line(indent, a))
                cur = a
            out.append(indent + self._member_copy_text(m, None).strip("\n") + "\n")
        return "".join(out)

    def _nonvirtual_closure(self) -> set[str]:
        out = {self.T.key}
        stack = [self.T]
        while stack:
            c = stack.pop()
            for e in c.bases:
                if not e.virtual and e.cls.key not in out:
                    out.add(e.cls.key)
                    stack.append(e.cls)
        return out

    def _fields(self, virtual_part: bool) -> list[Member]:
        nv = self._nonvirtual_closure()
        order = {c.key: i for i, c in enumerate(self.h.construction_order)}
        classes = [c for c in self.h.classes.values()
                   if not c.is_target and ((c.key not in nv) == virtual_part)]

        def key(c: ClassInfo):
            lk = self.layout.order_key(c.key) if self.layout else None
            return (lk[1] if lk else 1 << 40, order[c.key])

        out: list[Member] = []
        for c in sorted(classes, key=key):
            seen: set[int] = set()
            for m in c.members:
                if m.kind == "field" and m in self.copied:
                    first = m.group[0] if m.group else m
                    if id(first) in seen:
                        continue
                    seen.add(id(first))
                    out.append(first)
        return out

    def _member_copy_text(self, m: Member, new_name: str | None) -> str:
        f = cx.file_of(m.cursor)
        start, end = self.member_unit(m)
        ctx = self.ctx_for(m, m.cursor, True)
        edits = list(self.region_edits(m.cursor, ctx))
        for g in (m.group or [m])[1:]:
            edits += self.region_edits(g.cursor, ctx)
        edits += self.head_edits(m, m.cursor, start, new_name)
        if m.kind == "method" and m.pure:
            # a pure virtual function with a definition, called as Base::f(): its copy is
            # an ordinary function, so `= 0` goes
            toks = self.src.tokens(f, start, end)
            for i in range(len(toks) - 1, 1, -1):
                if toks[i].spelling == "0" and toks[i - 1].spelling == "=":
                    edits.append(Edit(f, toks[i - 2].end, toks[i].end, "",
                                      "drop the pure specifier"))
                    break
        text = apply_to_slice(self.src.data(f), start, end, drop_contained(edits))
        if m.kind == "type" and not text.rstrip().endswith(";"):
            text += ";"
        if m.kind == "method" and not text.rstrip().endswith((";", "}")):
            text += ";"
        if m.kind == "friend" and not text.rstrip().endswith(";"):
            text += ";"
        return text

    def _init_text(self, k: Member, indent: str) -> str:
        """The init function replacing base constructor/destructor `k` (a declaration when
        `k` is defined out of line)."""
        d = self.definition_of(k)
        if d is None or d is not k.cursor:
            return self._init_decl(k)
        return self._init_def(k, d, "", in_class=True, indent=indent)

    def _init_decl(self, k: Member) -> str:
        name = self.init_name(k)
        if k.kind == "dtor":
            return f"void {name}();"
        cd = self.ctor_def(k.cursor)
        ctx = self.ctx_for(k, k.cursor, True, ctor=True)
        edits = self.region_edits(k.cursor, ctx)
        f = cx.file_of(k.cursor)
        params = apply_to_slice(self.src.data(f), cd.lparen.end, cd.rparen.start, edits)
        exc = apply_to_slice(self.src.data(f), cd.rparen.end, cd.head_end, edits)
        pre = "constexpr " if self._is_constexpr(k.cursor) else ""
        return f"{pre}void {name}({params}){exc};"

    def _init_def(self, k: Member, d: ci.Cursor, qual: str, in_class: bool,
                  indent: str = "") -> str:
        name = self.init_name(k)
        f = cx.file_of(d)
        data = self.src.data(f)
        ctx = self.ctx_for(k, d, in_class, ctor=True)
        edits = self.region_edits(d, ctx)
        body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
        bs, be = cx.span(body) if body is not None else (0, 0)
        inner = apply_to_slice(data, bs + 1, be - 1, edits) if body is not None else ""
        pre = "constexpr " if self._is_constexpr(d) else ""
        if k.kind == "dtor":
            return f"{pre}void {qual}{name}() " + self._format_body([], inner, indent)
        cd = self.ctor_def(d)
        params = apply_to_slice(data, cd.lparen.end, cd.rparen.start, edits)
        exc = apply_to_slice(data, cd.rparen.end, cd.head_end, edits)
        lines: list[str] = []
        for e in k.cls.bases:
            if e.virtual:
                continue
            it = next((i for i in cd.items if i.kind == "base" and i.cls is e.cls), None)
            lines += [self.call_text(c) for c in self.construct_calls(e.cls, it, ctx)]
        members = [i for i in cd.items if i.kind == "member" and i.field is not None
                   and self.kept_visible(i.field)]
        members.sort(key=lambda i: i.field.unit[0])
        for i in members:
            text = self.assignment(i, edits, f)
            if text:
                lines.append(text)
        return f"{pre}void {qual}{name}({params}){exc} " + \
            self._format_body(lines, inner, indent)

    # ---- base classes and out-of-line definitions -----------------------------------------
    def class_removed(self, c: ClassInfo) -> bool:
        if c.is_target or c.key in self.outside.used_elsewhere:
            return False
        if c.template is not None and cx.key_of(c.template) in \
                self.outside.templates_used_elsewhere:
            return False
        return True

    def _t_end(self) -> int:
        """Where definitions moved behind the target go: after its definition, or after the
        outermost class its definition is written in (`struct Outer { struct T {...}; };`)."""
        outer = self.T.decl
        while outer.lexical_parent is not None and \
                outer.lexical_parent.kind in cx.RECORD_KINDS:
            outer = outer.lexical_parent
        e = cx.span(outer)[1]
        nxt = self.src.next_token(self.t_file, e, 64)
        return nxt.end if nxt is not None and nxt.spelling == ";" else e

    def _edit_bases(self) -> None:
        for c in self.h.classes.values():
            if c.is_target or not self.class_removed(c):
                continue
            f = c.file
            s, e = cx.span(c.body)
            nxt = self.src.next_token(f, e, 64)
            if nxt is not None and nxt.spelling == ";":
                e = nxt.end
            self._delete_line_range(f, s, e, comments=True)
        # out-of-line definitions of base members
        for c in self.h.classes.values():
            if c.is_target:
                continue
            removed = self.class_removed(c)
            for m in c.members:
                for d in m.defs:
                    self._place_def(m, d, removed)

    def _def_unit(self, d: ci.Cursor) -> tuple[int, int]:
        f = cx.file_of(d)
        s, e = cx.span(d)
        nxt = self.src.next_token(f, e, 64)
        if nxt is not None and nxt.spelling == ";":
            e = nxt.end
        return s, e

    def _place_def(self, m: Member, d: ci.Cursor, removed: bool) -> None:
        f = cx.file_of(d)
        s, e = self._def_unit(d)
        has_body = any(c.kind == CK.COMPOUND_STMT for c in d.get_children())
        wanted = m in self.copied or m.key in self.renames or \
            (m.kind in ("ctor", "dtor") and m.key in self.init_names and has_body)
        if not wanted:
            if removed:
                self._delete_line_range(f, s, e)
            return
        dest, in_place = self._destination(d, f, s)
        text = self._def_text(m, d, dest != self.main_file and not in_place, in_place)
        if in_place:
            if removed:
                self.edits.replace(f, s, e, text, f"definition of {m.qualified}")
            else:
                self.edits.insert(f, e, "\n\n" + text, f"copy of {m.qualified}")
            if self.include_target and f == self.main_file:
                self._ensure_include(f)
        else:
            if removed:
                self._delete_line_range(f, s, e)
            self.edits.insert(dest, self._t_end(), "\n\n" + text,
                              f"moved definition of {m.qualified}")

    def _delete_line_range(self, f: str, s: int, e: int, comments: bool = False) -> None:
        """Delete bytes [s, e) with the rest of their lines, the comment lines right above
        (when `comments`), and one of two blank lines the deletion would leave."""
        data = self.src.data(f)
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
        self.edits.delete(f, s, e, "remove definition")

    def _destination(self, d: ci.Cursor, f: str, s: int) -> tuple[str, bool]:
        """Where the target's copy of out-of-line definition `d` goes: (file, in place?)."""
        if f == self.t_file:
            return (f, True) if s > cx.span(self.T.decl)[1] else (f, False)
        if f == self.main_file:
            return f, True
        return self.t_file, False

    def _def_text(self, m: Member, d: ci.Cursor, add_inline: bool, in_place: bool) -> str:
        f = cx.file_of(d)
        data = self.src.data(f)
        s, e = self._def_unit(d)
        if m.kind in ("ctor", "dtor"):
            tpl = self._template_header(d)
            qual = (self.t_spell_at(d) if in_place else self.t_ns_spell) + "::"
            had_inline = any(t.spelling == "inline" for t in
                             self.src.tokens(f, s, d.location.offset))
            pre = "inline " if (tpl or add_inline or had_inline) else ""
            return pre + self._init_def(m, d, qual, in_class=False)
        ctx = self.ctx_for(m, d, False)
        edits = list(self.region_edits(d, ctx))
        if not in_place:
            edits = self._respell_for_target_scope(d, edits)
        new_name = self.renames.get(m.key)
        edits += self.head_edits(m, d, s, new_name)
        tpl = self._template_header(d)
        inline = add_inline and not any(t.spelling == "inline" for t in
                                        self.src.tokens(f, s, d.location.offset))
        if tpl is not None:
            edits.append(Edit(f, tpl[0], tpl[1], "inline ", "drop template header"))
        elif inline:
            edits.append(Edit(f, s, s, "inline ", "inline in a header"))
        return apply_to_slice(data, s, e, drop_contained(edits))

    def _respell_for_target_scope(self, d: ci.Cursor, edits: list[Edit]) -> list[Edit]:
        out = []
        for ed in edits:
            if ed.text == self.t_spell_at(d) and ed.why.startswith("base"):
                out.append(Edit(ed.file, ed.start, ed.end, self.t_ns_spell, ed.why))
            else:
                out.append(ed)
        return out

    def _template_header(self, d: ci.Cursor) -> tuple[int, int] | None:
        toks = self.src.cursor_tokens(d)
        if len(toks) < 2 or toks[0].spelling != "template" or toks[1].spelling != "<":
            return None
        j = cx.matching_angle(toks, 1)
        nxt = toks[j + 1].start if j + 1 < len(toks) else toks[j].end
        return toks[0].start, nxt

    def _ensure_include(self, f: str) -> None:
        """Add an #include of the target's header to a source file that did not see it:
        after the last #include line at the top of the file (or at its start)."""
        if f in self._included:
            return
        self._included.add(f)
        for inc in self.src.tu.get_includes():
            if inc.source is not None and cx.norm_path(inc.source.name) == f and \
                    inc.include is not None and \
                    cx.norm_path(inc.include.name) == self.include_target:
                return
        data = self.src.data(f)
        at = 0
        pos = 0
        for line in data.splitlines(keepends=True):
            stripped = line.strip()
            if re.match(rb"#\s*include\b", stripped):
                at = pos + len(line)
            elif stripped and not stripped.startswith((b"//", b"#", b"/*", b"*")):
                break
            pos += len(line)
        rel = os.path.relpath(self.include_target, os.path.dirname(f))
        self.edits.insert(f, at, f'#include "{rel}"\n', "include the target")

    # ---- report -----------------------------------------------------------------------------
    def _report(self, inits: list[Member], epilogue) -> dict:
        h = self.h
        removed = [c.key for c in h.classes.values() if not c.is_target and
                   self.class_removed(c)]
        kept = [c.key for c in h.classes.values() if not c.is_target and
                not self.class_removed(c)]
        virtuals = [m.qualified for m in [*self.T.members, *self.copied]
                    if m.kind in ("method", "dtor") and m.virtual]
        virtuals += [f"{h.members[k].qualified} (as {n})" for k, n in self.renames.items()
                     if h.members[k].virtual]
        return {
            "class": self.T.key,
            "classes_removed": removed,
            "classes_kept": kept,
            "members_copied": [{"from": m.cls.key, "name": m.name or m.kind, "kind": m.kind}
                               for m in self.copied],
            "members_dropped": [{"from": m.cls.key, "name": m.name, "kind": m.kind}
                                for m in self.dropped],
            "renamed_copies": [{"from": h.members[k].qualified, "as": n}
                               for k, n in self.renames.items()],
            "init_functions": [{"from": f"{m.cls.key}::{'~' if m.kind == 'dtor' else ''}"
                                        f"{m.cls.name}", "as": self.init_name(m)}
                               for m in inits],
            "virtual_functions_devirtualised": virtuals,
            "vtable_pointers_removed": self.layout.vptrs if self.layout else None,
        }


def _paren(text: str) -> str:
    t = text.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9:]*|[0-9][0-9A-Za-z_'.]*", t):
        return t
    return f"({t})"
