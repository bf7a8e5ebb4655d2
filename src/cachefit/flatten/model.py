"""The class hierarchy below a target class, as flattening sees it.

Built from libclang cursors: every class of the hierarchy (a template base is its class
template's pattern plus the argument texts of the specialization), its direct bases (virtual
or not, with their access), and its members. On top of that, the decisions of step 1 of
paper 001: which declaration of each name the most derived class sees (breadth-first from the
target, a derived declaration hides a base one), the final overrider of each virtual function,
the order in which C++ constructs the base subobjects.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.cx import CK, Key
from cachefit.flatten.problems import PreconditionFailed, Unsupported
from cachefit.model.type_names import unqualified_type_key

ACCESS_RANK = {"private": 0, "protected": 1, "public": 2}
RANK_ACCESS = {v: k for k, v in ACCESS_RANK.items()}


def access_of(cursor: ci.Cursor) -> str:
    spec = cursor.access_specifier
    if spec == ci.AccessSpecifier.PRIVATE:
        return "private"
    if spec == ci.AccessSpecifier.PROTECTED:
        return "protected"
    return "public"


@dataclass(eq=False)
class BaseEdge:
    cls: ClassInfo
    virtual: bool
    access: str
    spec: ci.Cursor


@dataclass(eq=False)
class Member:
    """One member declaration of a class of the hierarchy."""

    cls: ClassInfo
    cursor: ci.Cursor               # the declaration inside the class body
    kind: str                       # field static method ctor dtor type friend assert
    name: str
    names: list[str]                # names it introduces (an unscoped enum: its constants)
    access: str
    virtual: bool = False
    pure: bool = False
    defaulted: bool = False
    deleted: bool = False
    unit: tuple[int, int] = (0, 0)  # the declaration's bytes in the class body, with ';'
    group: list[Member] = field(default_factory=list)   # fields declared together
    defs: list[ci.Cursor] = field(default_factory=list)  # out-of-line definitions

    @property
    def key(self) -> Key:
        k = cx.key_of(self.cursor)
        assert k is not None
        return k

    @property
    def qualified(self) -> str:
        return f"{self.cls.name}::{self.name}"

    @property
    def has_inline_body(self) -> bool:
        return any(c.kind == CK.COMPOUND_STMT for c in self.cursor.get_children())


@dataclass(eq=False)
class ClassInfo:
    key: str                        # canonical spelling, e.g. counted<tcb>
    name: str                       # plain name, e.g. counted
    decl: ci.Cursor                 # the class (for a template base: the specialization)
    body: ci.Cursor                 # whose children are the members (definition or template)
    template: ci.Cursor | None      # the class template of an implicit specialization
    params: list[ci.Cursor] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    bases: list[BaseEdge] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)
    is_target: bool = False

    @property
    def file(self) -> str:
        f = cx.file_of(self.body)
        assert f is not None
        return f

    @property
    def default_access(self) -> str:
        kind = self.decl.kind if self.template is None else self._pattern_kind()
        return "private" if kind == CK.CLASS_DECL else "public"

    def _pattern_kind(self) -> ci.CursorKind:
        for t in cx.Source(self.body.translation_unit).cursor_tokens(self.body):
            if t.spelling in ("class", "struct", "union") and t.kind == "KEYWORD":
                return CK.CLASS_DECL if t.spelling == "class" else CK.STRUCT_DECL
        return CK.STRUCT_DECL

    @property
    def body_key(self) -> Key | None:
        return cx.loc_key(self.body)

    def param_index(self, cursor: ci.Cursor) -> int | None:
        k = cx.loc_key(cursor)
        for i, p in enumerate(self.params):
            if cx.loc_key(p) == k:
                return i
        return None

    def __repr__(self) -> str:
        return f"ClassInfo({self.key})"


class Hierarchy:
    """The target class and all its (direct and indirect) base classes."""

    def __init__(self, target_decl: ci.Cursor, src: cx.Source) -> None:
        self.src = src
        self.classes: dict[str, ClassInfo] = {}
        self.by_loc: dict[Key, ClassInfo] = {}
        self.members: dict[Key, Member] = {}
        self.target = self._class_for(target_decl, None, None)
        self.target.is_target = True
        self._build()
        self._check_repeated_bases()
        self.vbase_order = self._virtual_base_order()
        self.construction_order = self._construction_order()
        self._ancestors: dict[str, set[str]] = {}
        for c in self.classes.values():
            self._ancestors[c.key] = self._compute_ancestors(c)
        self._index_members()
        self.path_access = self._path_access()
        self.overrides: dict[Key, set[Key]] = {}
        self._compute_overrides()

    # ---- construction -------------------------------------------------------------------
    def _class_for(self, decl: ci.Cursor, spec: ci.Cursor | None,
                   owner: ClassInfo | None) -> ClassInfo:
        rtype = decl.type.get_canonical()
        key = unqualified_type_key(rtype.spelling)
        if key in self.classes:
            return self.classes[key]
        template = None
        body = decl
        params: list[ci.Cursor] = []
        args: list[str] = []
        tmpl = cx.specialized_template(decl)
        where = cx.presumed(spec if spec is not None else decl)
        if tmpl is not None and tmpl.kind == CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION:
            raise Unsupported(f"base class {key} is a partial specialization of a template",
                              "flatten a hierarchy whose template bases use the primary "
                              "template or a full specialization", where,
                              code="unsupported-partial-specialization")
        if tmpl is not None and tmpl.kind == CK.CLASS_TEMPLATE and not list(decl.get_children()):
            template = tmpl
            body = tmpl
            params = [c for c in tmpl.get_children() if c.kind in cx.TEMPLATE_PARAM_KINDS]
            args = self._template_args(rtype, spec, params, key, where)
        if not body.is_definition() and template is None:
            raise PreconditionFailed(1, "invalid-cxx", f"class {key} is not defined",
                                     "define every class of the hierarchy", where)
        name = (template or decl).spelling
        if template is None and "<" in name:
            name = name.split("<", 1)[0]
        info = ClassInfo(key=key, name=name, decl=decl, body=body, template=template,
                         params=params, args=args)
        self.classes[key] = info
        bk = info.body_key
        if bk is not None:
            self.by_loc[bk] = info
        for dk in (cx.loc_key(decl), cx.key_of(decl)):
            # the definition, and the first declaration (`class Walker;` in the class a
            # class defined out of line is nested in) that references may name
            if dk is not None:
                self.by_loc.setdefault(dk, info)
        return info

    def _template_args(self, rtype: ci.Type, spec: ci.Cursor | None,
                       params: list[ci.Cursor], key: str, where) -> list[str]:
        texts: list[str] = []
        if spec is not None:
            toks = self.src.cursor_tokens(spec)
            for i, t in enumerate(toks):
                if t.spelling == "<" and t.is_punct:
                    j = cx.matching_angle(toks, i)
                    f = cx.file_of(spec)
                    for part in cx.split_top_level(toks[i + 1:j]):
                        if part:
                            texts.append(self.src.text(f, part[0].begin, part[-1].end))
                    break
        if not texts:
            n = rtype.get_num_template_arguments()
            for i in range(max(n, 0)):
                at = rtype.get_template_argument_type(i)
                if at.kind == ci.TypeKind.INVALID:
                    raise Unsupported(f"cannot read the template arguments of base {key}",
                                      "name the base with an explicit template-id "
                                      "(mixin<...>) in the base-specifier list", where,
                                      code="unsupported-template-args")
                texts.append(at.spelling)
        # default arguments
        for p in params[len(texts):]:
            toks = self.src.cursor_tokens(p)
            eq = next((k for k, t in enumerate(toks) if t.spelling == "=" and t.is_punct), None)
            if eq is None:
                raise Unsupported(f"cannot read the template arguments of base {key}",
                                  "spell out every template argument", where,
                                  code="unsupported-template-args")
            f = cx.file_of(p)
            texts.append(self.src.text(f, toks[eq + 1].begin, toks[-1].end))
        if len(texts) != len(params):
            raise Unsupported(f"template base {key}: {len(texts)} arguments for "
                              f"{len(params)} parameters (variadic templates?)",
                              "use a template base with a fixed parameter list", where,
                              code="unsupported-template-args")
        return texts

    def _build(self) -> None:
        queue = deque([self.target])
        seen = {self.target.key}
        while queue:
            c = queue.popleft()
            for spec in c.body.get_children():
                if spec.kind != CK.CXX_BASE_SPECIFIER:
                    continue
                btype = spec.type.get_canonical()
                bdecl = btype.get_declaration()
                if bdecl.kind not in cx.RECORD_KINDS:
                    raise Unsupported(f"base {spec.type.spelling} of {c.key} depends on a "
                                      "template parameter",
                                      "give template bases only non-dependent bases",
                                      cx.presumed(spec), code="unsupported-dependent-base")
                b = self._class_for(bdecl, spec, c)
                c.bases.append(BaseEdge(b, cx.is_virtual_base(spec), access_of(spec), spec))
                if b.key not in seen:
                    seen.add(b.key)
                    queue.append(b)

    def _check_repeated_bases(self) -> None:
        count: dict[str, int] = {}
        vbases: list[ClassInfo] = []

        def visit(c: ClassInfo) -> None:
            count[c.key] = count.get(c.key, 0) + 1
            for e in c.bases:
                if e.virtual:
                    if e.cls not in vbases:
                        vbases.append(e.cls)
                else:
                    visit(e.cls)

        visit(self.target)
        i = 0
        while i < len(vbases):
            visit(vbases[i])
            i += 1
        for key, n in count.items():
            if n > 1:
                c = self.classes[key]
                spec = next(e.spec for d in self.classes.values() for e in d.bases
                            if e.cls is c)
                raise PreconditionFailed(
                    3, "repeated-base",
                    f"{key} is a base class of {self.target.key} {n} times (non-virtual "
                    "inheritance on several paths), so its data members would be duplicated",
                    f"inherit {key} virtually on every path", cx.presumed(spec))

    def _virtual_base_order(self) -> list[ClassInfo]:
        """Virtual bases in the order C++ constructs them (depth-first, left to right)."""
        order: list[ClassInfo] = []

        def visit(c: ClassInfo) -> None:
            for e in c.bases:
                visit(e.cls)
                if e.virtual and e.cls not in order:
                    order.append(e.cls)

        visit(self.target)
        return order

    def _construction_order(self) -> list[ClassInfo]:
        """Every class of the hierarchy, each after all its bases (C++ construction order)."""
        order: list[ClassInfo] = []

        def nonvirtual(c: ClassInfo) -> None:
            for e in c.bases:
                if not e.virtual:
                    nonvirtual(e.cls)
            if c not in order:
                order.append(c)

        for v in self.vbase_order:
            nonvirtual(v)
        nonvirtual(self.target)
        return order

    def _compute_ancestors(self, c: ClassInfo) -> set[str]:
        out: set[str] = set()
        stack = [e.cls for e in c.bases]
        while stack:
            b = stack.pop()
            if b.key not in out:
                out.add(b.key)
                stack.extend(e.cls for e in b.bases)
        return out

    def derives(self, derived: ClassInfo, base: ClassInfo) -> bool:
        """Whether `derived` is (directly or not) derived from `base` (not equal)."""
        return base.key in self._ancestors[derived.key]

    def _path_access(self) -> dict[str, int]:
        """The best access along any inheritance path from the target, per class."""
        best: dict[str, int] = {self.target.key: 2}
        changed = True
        while changed:
            changed = False
            for c in self.classes.values():
                if c.key not in best:
                    continue
                for e in c.bases:
                    a = min(best[c.key], ACCESS_RANK[e.access])
                    if best.get(e.cls.key, -1) < a:
                        best[e.cls.key] = a
                        changed = True
        return best

    def effective_access(self, m: Member) -> str:
        if m.access == "private" or m.cls.is_target:
            return m.access
        return RANK_ACCESS[min(ACCESS_RANK[m.access], self.path_access.get(m.cls.key, 2))]

    # ---- members --------------------------------------------------------------------------
    def _index_members(self) -> None:
        for c in self.classes.values():
            c.members = list(self._members_of(c))
            for m in c.members:
                self.members[m.key] = m

    def _members_of(self, c: ClassInfo):
        children = list(c.body.get_children())
        current_group: list[Member] = []
        for ch in children:
            kind = ch.kind
            if kind in (CK.CXX_BASE_SPECIFIER, CK.CXX_ACCESS_SPEC_DECL) or \
                    kind in cx.TEMPLATE_PARAM_KINDS or cx.is_name_qualifier(ch, c.body):
                continue
            if kind.is_attribute():
                if kind in (CK.ALIGNED_ATTR, CK.PACKED_ATTR) and not c.is_target:
                    raise Unsupported(f"base class {c.key} has an alignment or packing "
                                      "attribute that flattening would lose",
                                      "move the attribute to the most derived class",
                                      cx.presumed(ch), code="unsupported-class-attribute")
                continue
            access = cx_access(ch)
            m: Member | None = None
            if kind == CK.FIELD_DECL:
                if not ch.spelling:
                    raise Unsupported(f"anonymous member in {c.key}",
                                      "give the struct/union member a name",
                                      cx.presumed(ch), code="unsupported-anonymous-member")
                m = Member(c, ch, "field", ch.spelling, [ch.spelling], access)
            elif kind == CK.VAR_DECL:
                m = Member(c, ch, "static", ch.spelling, [ch.spelling], access)
            elif kind in (CK.CXX_METHOD, CK.CONVERSION_FUNCTION, CK.FUNCTION_TEMPLATE):
                m = Member(c, ch, "method", ch.spelling, [ch.spelling], access,
                           virtual=ch.is_virtual_method(), pure=ch.is_pure_virtual_method(),
                           defaulted=ch.is_default_method(), deleted=ch.is_deleted_method())
                if kind == CK.FUNCTION_TEMPLATE and "<" in m.name:
                    m.name = m.names[0] = m.name.split("<", 1)[0]
            elif kind == CK.CONSTRUCTOR:
                m = Member(c, ch, "ctor", c.name, [], access, defaulted=ch.is_default_method(),
                           deleted=ch.is_deleted_method())
            elif kind == CK.DESTRUCTOR:
                m = Member(c, ch, "dtor", "~" + c.name, [], access,
                           virtual=ch.is_virtual_method(), defaulted=ch.is_default_method(),
                           deleted=ch.is_deleted_method())
            elif kind == CK.ENUM_DECL:
                consts = [e.spelling for e in ch.get_children()
                          if e.kind == CK.ENUM_CONSTANT_DECL]
                named = bool(ch.spelling) and "(unnamed" not in ch.spelling and \
                    "(anonymous" not in ch.spelling
                names = ([ch.spelling] if named else []) + \
                    ([] if ch.is_scoped_enum() else consts)
                m = Member(c, ch, "type", names[0] if names else "", names, access)
            elif kind in cx.TYPE_KINDS:
                if kind in cx.RECORD_KINDS and not ch.spelling:
                    raise Unsupported(f"anonymous struct/union in {c.key}",
                                      "give it a name", cx.presumed(ch),
                                      code="unsupported-anonymous-member")
                m = Member(c, ch, "type", ch.spelling, [ch.spelling], access)
            elif kind == CK.FRIEND_DECL:
                m = Member(c, ch, "friend", "", [], access)
            elif kind == CK.STATIC_ASSERT:
                m = Member(c, ch, "assert", "", [], access)
            elif kind in (CK.USING_DECLARATION, CK.USING_DIRECTIVE):
                raise Unsupported(f"using-declaration in {c.key}",
                                  "call the base member through a forwarding member function",
                                  cx.presumed(ch), code="unsupported-using")
            else:
                raise Unsupported(f"member of kind {kind.name} in {c.key}",
                                  "simplify the class", cx.presumed(ch),
                                  code="unsupported-member")
            m.unit = self._unit(ch)
            if m.kind == "field" and current_group and \
                    cx.span(current_group[0].cursor)[0] == cx.span(ch)[0]:
                current_group.append(m)
                for g in current_group:
                    g.group = current_group
                    g.unit = (current_group[0].unit[0], m.unit[1])
            elif m.kind == "field":
                current_group = [m]
                m.group = current_group
            else:
                current_group = []
            yield m

    def _unit(self, cursor: ci.Cursor) -> tuple[int, int]:
        """The bytes of a member declaration, with its ';' when it has one."""
        start, end = cx.span(cursor)
        f = cx.file_of(cursor)
        nxt = self.src.next_token(f, end, 64) if f else None
        if nxt is not None and nxt.spelling == ";" and nxt.is_punct:
            end = nxt.end
        return start, end

    def names(self) -> dict[str, list[Member]]:
        out: dict[str, list[Member]] = {}
        for c in self.classes.values():
            for m in c.members:
                for n in m.names:
                    out.setdefault(n, []).append(m)
        return out

    def visible_classes(self, decls: list[Member]) -> list[ClassInfo]:
        """The classes whose declarations of a name lookup in the target finds."""
        classes: list[ClassInfo] = []
        for m in decls:
            if m.cls not in classes:
                classes.append(m.cls)
        return [c for c in classes
                if not any(d is not c and self.derives(d, c) for d in classes)]

    # ---- virtual functions ----------------------------------------------------------------
    def _compute_overrides(self) -> None:
        for c in self.classes.values():
            for m in c.members:
                if m.kind in ("method", "dtor") and m.cursor.kind != CK.FUNCTION_TEMPLATE:
                    keys = set()
                    for o in cx.overridden(m.cursor):
                        k = cx.key_of(o)
                        if k is not None:
                            keys.add(k)
                    self.overrides[m.key] = keys

    def overrides_closure(self, key: Key) -> set[Key]:
        out: set[Key] = set()
        stack = list(self.overrides.get(key, ()))
        while stack:
            k = stack.pop()
            if k not in out:
                out.add(k)
                stack.extend(self.overrides.get(k, ()))
        return out

    def final_overrider(self, m: Member, context: ClassInfo | None = None) -> Member:
        """The function a virtual call of `m` runs on an object whose dynamic type is
        `context` (the target by default; a base while that base is being constructed)."""
        ctx = context or self.target
        allowed = {ctx.key} | self._ancestors[ctx.key]
        cands = [mm for mm in self.members.values()
                 if mm.cls.key in allowed and mm.kind == m.kind
                 and (mm is m or m.key in self.overrides_closure(mm.key))]
        best = [c for c in cands
                if all(o is c or self.derives(c.cls, o.cls) for o in cands)]
        if len(best) != 1:
            raise PreconditionFailed(1, "no-final-overrider",
                                     f"{m.qualified} has no unique final overrider in "
                                     f"{ctx.key}", "override it in the most derived class",
                                     cx.presumed(m.cursor))
        return best[0]

    def member_of(self, cursor: ci.Cursor) -> Member | None:
        """The hierarchy member a referenced declaration is (instantiations map to patterns)."""
        if cursor is None:
            return None
        k = cx.key_of(cursor)
        m = self.members.get(k) if k else None
        if m is not None:
            return m
        tmpl = cx.specialized_template(cursor)
        if tmpl is not None:
            k = cx.key_of(tmpl)
            return self.members.get(k) if k else None
        return None


def cx_access(cursor: ci.Cursor) -> str:
    return access_of(cursor)
