"""Which functions of a unit can touch an object of a traced type (issue 31's static filter).

A profile build without a `[trace] instrument` list instruments, by default, only the
functions of a unit that can load or store inside an object of a traced type. This module
decides which, from the libclang AST the unit instrumenter (cachefit.trace.unit_instrument)
already parsed; it never parses, compiles or runs anything. Its result names the functions
*not* chosen: the compiler gets them as a sanitizer-coverage ignorelist (`fun:` entries
with the names clang's special-case list matches: the plain name in C, the mangled name in
C++), so every function the analysis cannot name (lambdas, implicit members, template
instantiations, functions of headers it could not read) stays instrumented.

Types. The traced records, and the records whose memory can be a traced object's: records
holding one (a member, an array element, a base: containers such as Lua's `union GCUnion`),
records embedded in one (member records, base classes: a pointer to them points into the
traced object), and "header" records whose members are a prefix of a traced record's (Lua's
`GCObject`, the common header of every collectable object, through which the collector reads
a `Table`'s `marked`).

A function is chosen when its body (lambdas included):
  * accesses a member of such a record, names one in `offsetof`, or has an expression of
    such a record type (a whole-object load, store or copy);
  * converts a pointer to such a record to or from another type (explicitly or not: a
    `void *` argument of memcpy, a `char *` byte pointer, an integer);
  * passes a pointer into such an object whose type does not say so (the address of a
    member, a member array, a pointer converted away from the record type; directly, through
    local variables, parameters or the results of functions of the unit) to a function the
    unit defines, which is then chosen too;
  * calls, or takes the address of, a chosen function the unit defines (it may be inlined),
    or (C++) a virtual method named like a chosen one, a template specialisation or an
    out-of-view function whose types mention such a record, or holds an object of a class
    whose destructor is chosen;
  * is, or is a member of, a template (its instantiations are not in the AST: never listed);
  * loads or stores through a pointer to a non-record type (`*p`, `p[i]`; a C++ reference
    to one), unless it is a local array, a string literal or the address of a local: such
    a pointer may be an untyped pointer into a traced object that another unit made
    (`&L->l_G` passed on as `global_State **`, a record passed as `const void *`), which
    no analysis of this unit sees. A pointer to an unrelated record is not followed (its
    accesses could not lie in a traced object without breaking C's aliasing rules).
Such an untyped pointer that leaves the unit (an argument of a function defined elsewhere or
called through a pointer, a stored or returned value) is still reported as an escape
(`# escape:` lines of the listing); the receiving unit instruments its dereferences by the
rule above. The functions of system headers are analysed too (they can be inlined into the
project's). Not done: type punning of an untyped pointer into a traced object to an
unrelated record type in another unit, and calls the optimizer could make direct through a
constant function pointer table of the unit (they are treated as calls that cannot be
inlined).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind

_FUNCTION_DEFS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE, CK.CONSTRUCTOR,
                  CK.DESTRUCTOR, CK.CONVERSION_FUNCTION}
_SCOPES = {CK.NAMESPACE, CK.LINKAGE_SPEC, CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL,
           CK.CLASS_TEMPLATE, CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, CK.UNEXPOSED_DECL}
_TEMPLATES = {CK.FUNCTION_TEMPLATE, CK.CLASS_TEMPLATE, CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
_RECORDS = {CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL}
_CASTS = {CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR,
          CK.CXX_FUNCTIONAL_CAST_EXPR, CK.CXX_CONST_CAST_EXPR, CK.CXX_DYNAMIC_CAST_EXPR}
_WALKED = {CK.MEMBER_REF_EXPR, CK.MEMBER_REF, CK.DECL_REF_EXPR, CK.CALL_EXPR,
           CK.UNARY_OPERATOR, CK.ARRAY_SUBSCRIPT_EXPR, CK.UNEXPOSED_EXPR, CK.VAR_DECL,
           CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR, CK.RETURN_STMT,
           CK.LAMBDA_EXPR, CK.PAREN_EXPR, CK.CXX_NEW_EXPR, CK.CXX_DELETE_EXPR} | _CASTS
_WALKED_IDS = {k.value for k in _WALKED}
_FUNCTION_REFS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
                  CK.CONVERSION_FUNCTION, CK.FUNCTION_TEMPLATE}
_VISIT = ci.callbacks["cursor_visit"]

# What makes an expression hold an untyped pointer into a traced object (see _Facts.sources).
_HIDDEN = ("hidden",)


@dataclass(frozen=True)
class FunctionChoice:
    """One function definition of the unit: whether its loads and stores are instrumented,
    why, and the names the compiler knows it by (empty for a template: not listed)."""

    name: str
    chosen: bool
    why: str
    symbols: tuple[str, ...]
    system: bool = False        # defined in a system header


@dataclass
class FilterResult:
    """The functions of one unit, chosen or not, and the untyped pointers that escape it."""

    functions: list[FunctionChoice] = field(default_factory=list)
    escapes: list[str] = field(default_factory=list)

    @property
    def instrumented(self) -> int:
        return sum(1 for f in self.functions if f.chosen)

    def ignorelist_text(self) -> str:
        """The `-fsanitize-coverage-ignorelist` file: a `fun:` line per symbol of every
        function not chosen (sorted, so that the same choice gives the same file)."""
        names = sorted({s for f in self.functions if not f.chosen for s in f.symbols})
        return "# cachefit: functions that cannot touch a traced type (issue 31)\n" + \
            "".join(f"fun:{n}\n" for n in names)

    def listing(self, source: str) -> str:
        """The human-readable list: `+ name  why` for each instrumented function, `- name`
        for the others, then the escapes."""
        lines = [f"# {source}: {self.instrumented} of {len(self.functions)} functions "
                 "instrumented (cachefit static filter, issue 31)"]
        for f in sorted(self.functions, key=lambda f: (not f.chosen, f.system, f.name)):
            mark = "+" if f.chosen else "-"
            sys_note = " [system header]" if f.system else ""
            lines.append(f"{mark} {f.name}{sys_note}" + (f"  ({f.why})" if f.chosen else ""))
        lines.extend(f"# escape: {e}" for e in self.escapes)
        return "\n".join(lines) + "\n"


@dataclass
class _Facts:
    """What one walk of a function's body found."""

    cursor: ci.Cursor
    name: str
    usr: str
    params: dict[str, int]
    template: bool
    system: bool
    why: str = ""
    refs: set[str] = field(default_factory=set)          # functions named in the body
    virtual_names: set[str] = field(default_factory=set)
    # C++: functions called whose types mention a record of the traced types' memory or a
    # lambda (a template specialisation whose body the analysis does not see).
    typed_calls: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)       # C++: class types of objects made
    # Offsets of what makes an expression hold an untyped pointer into a traced object:
    # (offset, source), source one of _HIDDEN, ("var", usr), ("param", i), ("call", usr).
    marks: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    # Where such pointers go: (start, end, kind, detail) with kind "arg" (detail: callee
    # usr or "" and the argument index), "var" (variable usr), "return", "store".
    flows: list[tuple[int, int, str, tuple[str, ...]]] = field(default_factory=list)
    lambdas: bool = False
    taints: set[str] = field(default_factory=set)      # variables given to annotations


def _children(c: ci.Cursor) -> list[ci.Cursor]:
    return list(c.get_children())


class TouchFilter:
    """Decide, for each function definition of a parsed unit, whether it can touch an
    object of the records `targets` (USRs of the traced types)."""

    def __init__(self, tu: ci.TranslationUnit, targets: Mapping[str, str], lang: str,
                 is_system: Callable[[int], bool]) -> None:
        self.tu = tu
        self.names = set(targets.values())
        self.lang = lang
        self.is_system = is_system
        self.records: dict[str, ci.Cursor] = {}
        self.traced = set(targets)
        self.alias: set[str] = set()      # records whose memory can be a traced object's
        self.inner: set[str] = set()      # their part inside a traced object: no holders
        self._names: re.Pattern[str] | None = None

    # ------------------------------------------------------------ types

    def _collect_records(self, c: ci.Cursor, out: list[ci.Cursor]) -> None:
        for k in c.get_children():
            if k.kind in _RECORDS and k.is_definition():
                self.records.setdefault(k.get_usr(), k)
                out.append(k)
                self._collect_records(k, out)
            elif k.kind in (CK.NAMESPACE, CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL):
                self._collect_records(k, out)
            elif k.kind in (CK.TYPEDEF_DECL, CK.VAR_DECL, CK.FIELD_DECL):
                self._collect_records(k, out)   # `typedef struct {..} T;`, `struct {..} x;`

    @staticmethod
    def _element(t: ci.Type) -> ci.Type:
        canon = t.get_canonical()
        for _ in range(16):
            if canon.kind not in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY,
                                  TK.DEPENDENTSIZEDARRAY):
                break
            canon = canon.element_type.get_canonical()
        return canon

    def _record_usr(self, t: ci.Type) -> str | None:
        canon = self._element(t)
        if canon.kind != TK.RECORD:
            return None
        d = canon.get_declaration()
        return None if d.kind == CK.NO_DECL_FOUND else str(d.get_usr())

    def _parts(self, rec: ci.Cursor) -> tuple[list[str], list[tuple[str, int]]]:
        """(record USRs of its members and bases, (field type, offset) of its fields)."""
        inner: list[str] = []
        fields: list[tuple[str, int]] = []
        for k in rec.get_children():
            if k.kind == CK.FIELD_DECL:
                fields.append((k.type.get_canonical().spelling, k.get_field_offsetof()))
                u = self._record_usr(k.type)
                if u:
                    inner.append(u)
            elif k.kind == CK.CXX_BASE_SPECIFIER:
                u = self._record_usr(k.type)
                if u:
                    inner.append(u)
            elif k.kind in _RECORDS and k.is_definition() and not k.spelling:
                inner.append(k.get_usr())      # anonymous struct/union member
        return inner, fields

    def compute_alias(self) -> None:
        """The records whose memory can be a traced object's (the module docstring)."""
        recs: list[ci.Cursor] = []
        self._collect_records(self.tu.cursor, recs)
        parts = {u: self._parts(r) for u, r in self.records.items()}
        traced = {u for u in self.traced if u in parts}
        # Embedded in a traced record (members, bases, recursively).
        inside = set(traced)
        todo = list(traced)
        while todo:
            u = todo.pop()
            for v in parts.get(u, ([], []))[0]:
                if v not in inside:
                    inside.add(v)
                    todo.append(v)
        # Holding a traced record.
        holders = set(self.traced)
        changed = True
        while changed:
            changed = False
            for u, (inner, _f) in parts.items():
                if u not in holders and any(v in holders for v in inner):
                    holders.add(u)
                    changed = True
        # Headers: every field of the record is a field of a traced record, same type and
        # offset, from the first on.
        headers: set[str] = set()
        for u, (_inner, fields) in parts.items():
            if not fields or u in inside:
                continue
            for t in traced:
                tf = parts[t][1]
                if len(fields) <= len(tf) and fields == tf[:len(fields)]:
                    headers.add(u)
                    break
        self.alias = inside | holders | headers | self.traced
        self.inner = inside | headers
        names = sorted({self.records[u].spelling for u in self.alias
                        if u in self.records and self.records[u].spelling} |
                       {n.split("<")[0].split("::")[-1] for n in self.names if n})
        self._names = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b") \
            if names else None

    def _in_alias(self, t: ci.Type) -> bool:
        u = self._record_usr(t)
        return u is not None and u in self.alias

    def _points_into(self, t: ci.Type, within: set[str] | None = None) -> bool:
        """Whether `t` is a pointer or reference to a record of `within` (the aliasing
        records by default)."""
        canon = t.get_canonical()
        if canon.kind in (TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            u = self._record_usr(canon.get_pointee())
            return u is not None and u in (self.alias if within is None else within)
        return False

    # ------------------------------------------------------------ functions

    def _definitions(self, c: ci.Cursor, in_template: bool,
                     out: list[tuple[ci.Cursor, bool]]) -> None:
        for k in c.get_children():
            kind = k.kind
            if kind in _FUNCTION_DEFS:
                if k.is_definition():
                    out.append((k, in_template or kind == CK.FUNCTION_TEMPLATE))
            elif kind in _SCOPES:
                self._definitions(k, in_template or kind in _TEMPLATES, out)

    @staticmethod
    def _symbols(fn: ci.Cursor, lang: str) -> tuple[str, ...]:
        if lang != "c++":
            return (fn.spelling,) if fn.spelling else ()
        m = fn.mangled_name
        if not m:
            return ()
        out = {m}
        # libclang names the complete-object constructor/destructor; clang emits the base
        # object one (and the deleting destructor) too.
        for a, bs in (("C1E", ("C2E",)), ("D1E", ("D2E", "D0E"))):
            if a in m:
                out.update(m.replace(a, b, 1) for b in bs)
        return tuple(sorted(out))

    def _walk(self, fn: ci.Cursor, template: bool) -> _Facts:
        params = {a.get_usr(): i for i, a in enumerate(fn.get_arguments() or [])}
        name = _display_name(fn, self.lang)
        facts = _Facts(fn, name, fn.get_usr(), params, template,
                       self.is_system(fn.extent.start.offset))
        found: list[ci.Cursor] = []
        tu = fn._tu

        def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
            if child._kind_id in _WALKED_IDS:
                child._tu = tu
                found.append(child)
            return 2

        ci.conf.lib.clang_visitChildren(fn, _VISIT(visit), found)
        for c in found:
            try:
                self._look(c, facts)
            except ValueError:      # a type or cursor kind these bindings do not know
                self._seed(facts, "cannot be analysed")
        facts.marks.sort()
        return facts

    def _seed(self, facts: _Facts, why: str) -> None:
        if not facts.why:
            facts.why = why

    def _look(self, c: ci.Cursor, f: _Facts) -> None:
        kind = c.kind
        if kind in (CK.MEMBER_REF_EXPR, CK.MEMBER_REF):
            ref = c.referenced
            if ref is None:
                return
            if ref.kind == CK.FIELD_DECL:
                parent = ref.semantic_parent
                if parent is not None and parent.get_usr() in self.inner:
                    self._seed(f, f"{'offsetof' if kind == CK.MEMBER_REF else 'member'} "
                                  f"{parent.spelling or parent.type.spelling}.{ref.spelling}")
                    if kind == CK.MEMBER_REF_EXPR and c.type.get_canonical().kind in (
                            TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
                        f.marks.append((c.extent.start.offset, _HIDDEN))  # decays
                    return
            elif ref.kind in _FUNCTION_REFS:
                self._function_ref(ref, f, c)
            if kind == CK.MEMBER_REF_EXPR and self._in_alias(c.type):
                self._seed(f, f"object of type {c.type.spelling}")
            return
        if kind == CK.DECL_REF_EXPR:
            ref = c.referenced
            if ref is None:
                return
            rk = ref.kind
            if rk in _FUNCTION_REFS:
                self._function_ref(ref, f, c)
            elif rk in (CK.VAR_DECL, CK.PARM_DECL):
                usr = ref.get_usr()
                at = c.extent.start.offset
                if usr in f.params:
                    f.marks.append((at, ("param", str(f.params[usr]))))
                f.marks.append((at, ("var", usr)))
                if ref.type.get_canonical().kind == TK.LVALUEREFERENCE and \
                        ref.type.get_canonical().get_pointee().kind != TK.RECORD:
                    self._seed(f, f"uses a reference ({c.spelling}) that may come from "
                                  "another unit")
                if self._in_alias(c.type):
                    self._seed(f, f"object {c.spelling} of type {c.type.spelling}")
            return
        if kind == CK.CALL_EXPR:
            self._call(c, f)
            return
        if kind in (CK.UNARY_OPERATOR, CK.ARRAY_SUBSCRIPT_EXPR, CK.PAREN_EXPR):
            t = c.type
            if self._in_alias(t):
                self._seed(f, f"object of type {t.spelling}")
            if kind == CK.UNARY_OPERATOR:
                self._address_of(c, f)
            if kind != CK.PAREN_EXPR:
                self._untyped_deref(c, f)
            return
        if kind in _CASTS or kind == CK.UNEXPOSED_EXPR:
            self._conversion(c, f, kind)
            return
        if kind == CK.VAR_DECL:
            init = [k for k in c.get_children() if k.kind.is_expression()]
            if init and _carries(c.type):
                e = init[-1].extent
                f.flows.append((e.start.offset, e.end.offset, "var", (c.get_usr(),)))
            if self._in_alias(c.type):
                self._seed(f, f"object {c.spelling} of type {c.type.spelling}")
            if self.lang == "c++":
                u = self._record_usr(c.type)
                if u:
                    f.classes.add(u)
            return
        if kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR):
            kids = _children(c)
            if len(kids) != 2:
                return
            lhs = _strip(kids[0])
            e = kids[1].extent
            if not _carries(kids[0].type):
                return
            if lhs.kind == CK.DECL_REF_EXPR and lhs.referenced is not None and \
                    lhs.referenced.kind in (CK.VAR_DECL, CK.PARM_DECL):
                ref = lhs.referenced
                usr = ref.get_usr()
                # a local, a parameter, a global: whoever reads it is chosen
                f.flows.append((e.start.offset, e.end.offset, "var", (usr,)))
            elif c.type.get_canonical().kind == TK.POINTER or kind == \
                    CK.COMPOUND_ASSIGNMENT_OPERATOR:
                f.flows.append((e.start.offset, e.end.offset, "store", (_short(c),)))
            return
        if kind == CK.RETURN_STMT:
            kids = _children(c)
            if kids and _carries(kids[0].type):
                e = kids[0].extent
                f.flows.append((e.start.offset, e.end.offset, "return", ()))
            return
        if kind == CK.LAMBDA_EXPR:
            f.lambdas = True
            return
        if kind in (CK.CXX_NEW_EXPR, CK.CXX_DELETE_EXPR) and self.lang == "c++":
            for k in c.get_children():
                u = self._record_usr(k.type.get_canonical().get_pointee()) \
                    if k.type.get_canonical().kind == TK.POINTER else None
                if u:
                    f.classes.add(u)
            t = c.type.get_canonical()
            if t.kind == TK.POINTER:
                u = self._record_usr(t.get_pointee())
                if u:
                    f.classes.add(u)

    def _function_ref(self, ref: ci.Cursor, f: _Facts, at: ci.Cursor) -> None:
        f.refs.add(ref.get_usr())
        if ref.kind == CK.CXX_METHOD and ref.is_virtual_method():
            f.virtual_names.add(ref.spelling)

    def _call(self, c: ci.Cursor, f: _Facts) -> None:
        ref = c.referenced
        callee = ""
        if ref is not None and ref.kind in _FUNCTION_REFS:
            callee = ref.get_usr()
            f.refs.add(callee)
            if ref.kind in (CK.CONSTRUCTOR, CK.DESTRUCTOR):
                p = ref.semantic_parent
                if p is not None:
                    f.classes.add(p.get_usr())
            if ref.kind == CK.CXX_METHOD and ref.is_virtual_method():
                f.virtual_names.add(ref.spelling)
        if self._in_alias(c.type):
            self._seed(f, f"object of type {c.type.spelling}")
        if self.lang == "c++":
            u = self._record_usr(c.type)
            if u:
                f.classes.add(u)
            if callee and (self._mentions(c, ref) or ">" in callee and not (
                    ref is not None and ref.location.file is not None and
                    self.is_system(ref.location.offset))):
                # a specialisation of the project's template, or one whose types name
                # a traced record's memory: its body is not in the AST
                f.typed_calls.add(callee)
        system = "sys" if ref is not None and ref.location.file is not None and \
            self.is_system(ref.location.offset) else ""
        for i, a in enumerate(c.get_arguments()):
            if not _carries(a.type):
                continue
            e = a.extent
            f.flows.append((e.start.offset, e.end.offset, "arg",
                            (callee, str(i), ref.spelling if ref is not None else "", system)))
        if callee:
            f.marks.append((c.extent.start.offset, ("call", callee)))
        if ref is not None and ref.spelling.startswith(("cachefit_", "__cachefit_")):
            # The runtime's annotations (runtime/include/cachefit.h) register untyped memory:
            # the variables they are given hold pointers into traced objects.
            self._seed(f, f"calls {ref.spelling}")
            for a in c.get_arguments():
                for d in a.walk_preorder():
                    if d.kind == CK.DECL_REF_EXPR and d.referenced is not None and \
                            d.referenced.kind in (CK.VAR_DECL, CK.PARM_DECL):
                        f.taints.add(d.referenced.get_usr())

    def _untyped_deref(self, c: ci.Cursor, f: _Facts) -> None:
        """Choose a function that loads or stores through a pointer whose pointee is not a
        record (`*p`, `p[i]`): another unit may have given it an untyped pointer into a
        traced object (`&L->l_G` passed on as `global_State **`, a `char *` into a record),
        which no analysis of this unit can see (issue 31: cross-unit escapes). Not chosen
        for this: a subscript of a local array, of a string literal, or through the
        address of a local. A pointer to an unrelated record cannot point into a traced
        object (its accesses would break C's aliasing rules)."""
        kids = _children(c)
        if not kids:
            return
        base = kids[0]
        try:
            bt = base.type.get_canonical()
            if c.kind == CK.UNARY_OPERATOR and (
                    bt.kind != TK.POINTER or c.type.get_canonical() != bt.get_pointee()):
                return      # not `*p`
            if bt.kind != TK.POINTER:
                return
            pointee = bt.get_pointee()
            if pointee.kind == TK.RECORD or pointee.kind == TK.FUNCTIONPROTO or \
                    pointee.kind == TK.FUNCTIONNOPROTO:
                return
            inner = _strip(base)
            if inner.kind == CK.STRING_LITERAL:
                return
            if inner.kind == CK.DECL_REF_EXPR and inner.referenced is not None and \
                    inner.referenced.kind == CK.VAR_DECL and \
                    inner.type.get_canonical().kind in (TK.CONSTANTARRAY, TK.VARIABLEARRAY) \
                    and inner.referenced.semantic_parent is not None and \
                    inner.referenced.semantic_parent.kind in _FUNCTION_DEFS:
                return      # a local array
            if inner.kind == CK.UNARY_OPERATOR:
                sub = _children(inner)
                if sub and sub[0].kind == CK.DECL_REF_EXPR and sub[0].referenced is not \
                        None and sub[0].referenced.kind in (CK.VAR_DECL, CK.PARM_DECL) and \
                        inner.type.get_canonical().kind == TK.POINTER and \
                        sub[0].type.get_canonical() == inner.type.get_canonical() \
                        .get_pointee() and sub[0].referenced.semantic_parent is not None \
                        and sub[0].referenced.semantic_parent.kind in _FUNCTION_DEFS:
                    return  # `&local`
        except ValueError:      # a type these bindings do not know: cannot decide
            pass
        self._seed(f, f"dereferences an untyped pointer ({_short(base)}) that may come "
                      "from another unit")

    def _address_of(self, c: ci.Cursor, f: _Facts) -> None:
        t = c.type.get_canonical()
        if t.kind != TK.POINTER or self._in_alias(t.get_pointee()):
            return
        kids = _children(c)
        if len(kids) != 1 or kids[0].type.get_canonical() != t.get_pointee():
            return      # not `&lvalue`
        if self._lvalue_in_alias(kids[0]):
            f.marks.append((c.extent.start.offset, _HIDDEN))

    def _lvalue_in_alias(self, e: ci.Cursor) -> bool:
        """Whether the lvalue `e` lies in a traced object: a member (of a member...) or an
        element of a member array of a record inside one (not of a holder's other
        members: Lua's `&gco->ts` is a string's, never a `Table`'s)."""
        for _ in range(32):
            e = _strip(e)
            if e.kind == CK.MEMBER_REF_EXPR:
                ref = e.referenced
                if ref is not None and ref.kind == CK.FIELD_DECL:
                    p = ref.semantic_parent
                    if p is not None and p.get_usr() in self.inner:
                        return True
                kids = _children(e)
                if not kids:
                    return False
                base = kids[0]
                if base.type.get_canonical().kind == TK.POINTER:
                    return self._points_into(base.type, self.inner)
                e = base
            elif e.kind == CK.ARRAY_SUBSCRIPT_EXPR:
                kids = _children(e)
                if not kids:
                    return False
                arr = kids[0]
                if arr.type.get_canonical().kind == TK.POINTER:
                    return self._points_into(arr.type, self.inner)
                e = arr
            elif e.kind == CK.UNARY_OPERATOR:
                kids = _children(e)
                return bool(kids) and self._points_into(kids[0].type, self.inner)
            else:
                return False
        return True

    def _conversion(self, c: ci.Cursor, f: _Facts, kind: ci.CursorKind) -> None:
        kids = [k for k in c.get_children() if k.kind.is_expression()]
        if not kids or (kind == CK.UNEXPOSED_EXPR and len(kids) != 1):
            if kind == CK.UNEXPOSED_EXPR:
                self._offsetof(c, f)
            return
        dst = c.type.get_canonical()
        src = kids[-1].type.get_canonical()
        if dst == src or dst.kind == TK.VOID or _strip(kids[-1]).kind == CK.INTEGER_LITERAL:
            return      # `(void)L`, a null pointer
        into_dst = self._points_into(dst)
        into_src = self._points_into(src)
        if into_src or into_dst:
            if into_src != into_dst:
                self._seed(f, f"conversion {src.spelling} -> {dst.spelling}")
            if into_src and not into_dst:
                f.marks.append((c.extent.start.offset, _HIDDEN))
            return
        if src.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY) and \
                dst.kind == TK.POINTER and self._lvalue_in_alias(kids[-1]):
            f.marks.append((c.extent.start.offset, _HIDDEN))   # a member array decays

    def _offsetof(self, c: ci.Cursor, f: _Facts) -> None:
        for k in c.get_children():
            if k.kind == CK.TYPE_REF and self._in_alias(k.type):
                self._seed(f, f"offsetof({k.type.spelling}, ...)")

    # ------------------------------------------------------------ the choice

    def run(self) -> FilterResult:
        self.compute_alias()
        defs: list[tuple[ci.Cursor, bool]] = []
        self._definitions(self.tu.cursor, False, defs)
        facts: dict[str, _Facts] = {}
        order: list[_Facts] = []
        for fn, template in defs:
            fa = self._walk(fn, template)
            if fa.usr in facts:
                continue
            facts[fa.usr] = fa
            order.append(fa)
        result = FilterResult()
        self._hidden_flows(order, facts, result)
        self._close(order, facts)
        for fa in order:
            chosen = bool(fa.why)
            result.functions.append(FunctionChoice(
                fa.name, chosen, fa.why,
                () if fa.template else self._symbols(fa.cursor, self.lang), fa.system))
        return result

    def _hidden_flows(self, order: list[_Facts], facts: dict[str, _Facts],
                      result: FilterResult) -> None:
        """Follow untyped pointers into traced objects through the unit's variables,
        parameters, calls and returns; choose every function they reach."""
        hidden_params: dict[str, set[str]] = {fa.usr: set() for fa in order}
        hidden_vars: set[str] = {u for fa in order for u in fa.taints}
        returns: set[str] = set()

        def is_hidden(fa: _Facts, start: int, end: int) -> bool:
            i = bisect.bisect_left(fa.marks, (start, ()))
            while i < len(fa.marks) and fa.marks[i][0] < end:
                src = fa.marks[i][1]
                if src == _HIDDEN or (src[0] == "var" and src[1] in hidden_vars) or (
                        src[0] == "param" and src[1] in hidden_params[fa.usr]) or (
                        src[0] == "call" and src[1] in returns):
                    return True
                i += 1
            return False

        escapes: dict[str, None] = {}
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for fa in order:
                for start, end, what, detail in fa.flows:
                    if not is_hidden(fa, start, end):
                        continue
                    self._seed(fa, "handles a pointer into a traced object")
                    if what == "var":
                        if detail[0] not in hidden_vars:
                            hidden_vars.add(detail[0])
                            changed = True
                    elif what == "return":
                        if fa.usr not in returns:
                            returns.add(fa.usr)
                            changed = True
                            if fa.cursor.linkage != ci.LinkageKind.INTERNAL:
                                escapes[f"{fa.name} returns a pointer into a traced object"] \
                                    = None
                    elif what == "arg":
                        callee, index, cname, system = detail
                        target = facts.get(callee)
                        if target is not None and not target.template:
                            if index not in hidden_params[callee]:
                                hidden_params[callee].add(index)
                                self._seed(target, f"gets a pointer into a traced object "
                                                   f"from {fa.name}")
                                changed = True
                        elif target is None and not system:
                            escapes[f"{fa.name} passes a pointer into a traced object to "
                                    f"{cname or 'a function pointer'}"] = None
                    elif what == "store":
                        escapes[f"{fa.name} stores a pointer into a traced object "
                                f"({detail[0]})"] = None
        result.escapes.extend(escapes)
        # Whoever reads a variable (local, parameter or global) holding such a pointer.
        for fa in order:
            if not fa.why and any(src[0] == "var" and src[1] in hidden_vars
                                  for _at, src in fa.marks if src != _HIDDEN):
                fa.why = "reads a variable that points into a traced object"

    def _close(self, order: list[_Facts], facts: dict[str, _Facts]) -> None:
        """Choose templates, and every function that may inline a chosen one."""
        for fa in order:
            if fa.template:
                self._seed(fa, "template (instantiations not analysed)")
            elif any("<" in n for n in self.names):
                # a traced class template instance: its members are not in the AST
                self._seed(fa, "a traced type is a template instance (not analysed)")
        changed = True
        while changed:
            changed = False
            chosen = {fa.usr for fa in order if fa.why}
            virtual = {fa.cursor.spelling for fa in order if fa.why and
                       fa.cursor.kind == CK.CXX_METHOD}
            dtor_classes = {fa.cursor.semantic_parent.get_usr() for fa in order
                            if fa.why and fa.cursor.kind in (CK.DESTRUCTOR, CK.CONSTRUCTOR)
                            and fa.cursor.semantic_parent is not None}
            for fa in order:
                if fa.why:
                    continue
                why = ""
                hit = fa.refs & chosen
                if hit:
                    why = f"calls {facts[sorted(hit)[0]].name} (may be inlined)"
                elif fa.virtual_names & virtual:
                    why = f"calls virtual {sorted(fa.virtual_names & virtual)[0]}"
                elif self.lang == "c++" and fa.classes & (dtor_classes | self.alias):
                    why = "makes or destroys an object whose constructor or destructor " \
                          "is chosen"
                elif self.lang == "c++" and any(u not in facts for u in fa.typed_calls):
                    why = "calls a function outside the analysis with traced types"
                if why:
                    fa.why = why
                    changed = True

    def _mentions(self, call: ci.Cursor, ref: ci.Cursor | None) -> bool:
        """Whether the call's type, its arguments' types or the callee's type or class
        name a record of the traced types' memory (as a word) or a lambda."""
        texts = [call.type.spelling, *(a.type.spelling for a in call.get_arguments())]
        if ref is not None:
            texts.append(ref.type.spelling)
            if ref.semantic_parent is not None:
                texts.append(ref.semantic_parent.type.spelling)
        text = " ".join(texts)
        return "(lambda at " in text or (self._names is not None and
                                          self._names.search(text) is not None)


_CARRIERS = {TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE, TK.CONSTANTARRAY,
             TK.INCOMPLETEARRAY, TK.LONG, TK.ULONG, TK.LONGLONG, TK.ULONGLONG, TK.INT128,
             TK.UINT128, TK.DEPENDENT, TK.UNEXPOSED, TK.AUTO, TK.RECORD, TK.ELABORATED}


def _carries(t: ci.Type) -> bool:
    """Whether a value of type `t` can carry a pointer (a pointer, a reference, an integer
    as wide as a pointer, a struct that may hold one, a type the analysis cannot see)."""
    try:
        return t.get_canonical().kind in _CARRIERS
    except ValueError:      # a kind these bindings do not know
        return True


def _strip(c: ci.Cursor) -> ci.Cursor:
    for _ in range(32):
        kids = _children(c)
        if c.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and len(kids) == 1:
            c = kids[0]
        elif c.kind in _CASTS and kids:
            c = kids[-1]
        else:
            break
    return c


def _short(c: ci.Cursor) -> str:
    toks = [t.spelling for t in c.get_tokens()]
    return " ".join(toks[:8])


def _display_name(fn: ci.Cursor, lang: str) -> str:
    """The name in the unit's list: C's plain name, C++'s qualified name and parameters."""
    parts: list[str] = []
    cur: ci.Cursor | None = fn
    while cur is not None and cur.kind != CK.TRANSLATION_UNIT:
        if cur.spelling and cur.kind not in (CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL):
            parts.append(cur.spelling)
        cur = cur.semantic_parent
    name = "::".join(reversed(parts))
    return name if lang != "c++" else \
        f"{name}({', '.join(a.type.spelling for a in fn.get_children() if a.kind == CK.PARM_DECL)})"


def choose_functions(tu: ci.TranslationUnit, targets: Mapping[str, str], lang: str,
                     is_system: Callable[[int], bool]) -> FilterResult:
    """Which function definitions of `tu` can touch an object of the records `targets`
    (USR -> traced type name); `is_system(offset)` tells code of system headers."""
    return TouchFilter(tu, targets, lang, is_system).run()
