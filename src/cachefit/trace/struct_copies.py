"""Struct copies made visible to the clang tracing backend.

clang lowers `*a = *b;`, `struct T x = *p;`, C++ trivial copies/moves of a class and the
copies into by-value parameters and return values to an llvm.memcpy (or to the backend's
byval copy) after sanitizer coverage has run, so the sancov backend sees none of their
loads and stores. For unit_instrument (the source edit pass) this module decides, from
libclang's AST, which of those expressions in an instrumented function can be rewritten
and gives the replacement text.

Handled, in two ways:
  * assignments (C `BinaryOperator '='` with record operands, C++ calls of the trivial
    copy/move assignment operator): the runtime's `__cachefit_memmove` records the read
    of the source, then the write of the destination, and makes the copy (a C assignment
    that is a statement of its own, a C++ class laid out as in C); otherwise (its value
    is used, volatile operands, C++ classes whose tail padding may hold another object)
    `__cachefit_note_copy(dst, src, n)` records and the compiler's copy follows;
  * copies from an lvalue E into a fresh object: a local variable of record type
    initialised (`= E`, `(E)`, `{E}`) with a trivial copy/move constructor, an argument
    copied into a by-value parameter (`f(*p)`), and `return E;`. E is replaced by a copy
    that `__cachefit_memcpy` makes into a temporary (the runtime records the read of E;
    its write lands in the temporary, no object), and the compiler's own copy then reads
    the temporary. The call is opaque, so the optimiser cannot turn the copy into loads
    of E's fields that sanitizer coverage would see as well (clang passes small structs
    in registers loaded from E at -O0, and at -O2 loads just the fields a callee or the
    variable's uses need): each such copy is exactly one read of the whole source.
Each operand is evaluated exactly once. Operands with side effects or that are not plain
lvalues (calls returning references, casts, conditionals) are left alone and reported as
warnings; temporaries (prvalues: no object is copied), user-provided copy constructors
(their own accesses are traced), volatile sources, slicing, dependent calls and types in
templates (a dependent call with an argument of a traced type is reported) and C++
implicit moves of locals in `return` are left alone. It never edits text itself
and never compiles anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind

NOTE_DECL = "void __cachefit_note_copy(void *, const void *, unsigned long);"

# C++ helpers: one evaluation of each operand, the original operator= / constructor.
CXX_HELPERS = (
    # An assignment: note the copy, then assign.
    "template <class D, class S> static inline D &__cachefit_assign_t(D &d, S &&s) "
    "{ __cachefit_note_copy((void *)__builtin_addressof(d), "
    "(const void *)__builtin_addressof(s), sizeof(D)); return d = static_cast<S &&>(s); }",
    # An assignment of a C-like class: the runtime records and makes the copy.
    "template <class D, class S> static inline D &__cachefit_memmove_t(D &d, S &s) "
    "{ __cachefit_memmove((void *)__builtin_addressof(d), "
    "(const void *)__builtin_addressof(s), sizeof(D)); return d; }",
    # An initialisation, a by-value argument or a return: copy the source through the
    # (opaque) runtime into a temporary that lives to the end of the full-expression and
    # give back an lvalue of the source's type, so overload resolution and the constructor
    # chosen do not change. In constant evaluation: the source itself.
    "template <class S> struct __cachefit_tmp_t { alignas(S) unsigned char b[sizeof(S)]; };",
    "template <class S> static inline S &__cachefit_byval_copy_t(S &s, __cachefit_tmp_t<S> &t) "
    "{ __cachefit_memcpy((void *)t.b, (const void *)__builtin_addressof(s), sizeof(S)); "
    "return *__builtin_launder(reinterpret_cast<S *>(t.b)); }",
    "template <class S> constexpr S &__cachefit_byval_t(S &s, "
    "__cachefit_tmp_t<S> &&t = __cachefit_tmp_t<S>()) "
    "{ return __builtin_is_constant_evaluated() ? s : __cachefit_byval_copy_t(s, t); }",
)

# Variables whose initialiser must stay as written (constant, static or without address).
_NOT_LOCAL = {"static", "thread_local", "_Thread_local", "__thread", "constexpr", "constinit",
              "register", "extern"}
_LVALUE_KINDS = {CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR,
                 CK.UNARY_OPERATOR}
_FUNCTION_KINDS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
                   CK.CONVERSION_FUNCTION, CK.FUNCTION_TEMPLATE, CK.LAMBDA_EXPR}
_REFERENCES = {TK.LVALUEREFERENCE, TK.RVALUEREFERENCE}


@dataclass(frozen=True)
class CopyEdit:
    """Replace bytes [start, end) of the unit with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Skipped:
    """A copy that is left unseen, and why."""

    offset: int
    why: str


def _peel(c: ci.Cursor) -> ci.Cursor:
    """Look through parentheses and implicit conversions (never through written casts)."""
    while True:
        kids = list(c.get_children())
        if c.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and len(kids) == 1 \
                and kids[0].kind.is_expression():
            c = kids[0]
        else:
            return c


def _record_usr(t: ci.Type) -> str | None:
    canon = t.get_canonical()
    if canon.kind != TK.RECORD:
        return None
    decl = canon.get_declaration()
    return None if decl.kind == CK.NO_DECL_FOUND else str(decl.get_usr())


def _statement(c: ci.Cursor) -> bool:
    """`c` is an expression statement of its own (`...; a = b;`), so its value is unused:
    the token after it is `;` and the one before it ends a statement or a condition, and
    it is not the last statement of a GNU statement expression."""
    f = c.extent.start.file
    if f is None:
        return False
    tu = c.translation_unit
    start, end = c.extent.start.offset, c.extent.end.offset
    size = os.path.getsize(f.name)

    def tokens(lo: int, hi: int) -> list[ci.Token]:
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, f, lo),
                                            ci.SourceLocation.from_offset(tu, f, hi))
        return list(tu.get_tokens(extent=rng))

    after = tokens(end, min(size, end + 64))
    before = [t for t in tokens(max(0, start - 256), start) if t.extent.end.offset <= start]
    if not (after and before) or after[0].spelling != ";":
        return False
    if [t.spelling for t in after[1:3]] == ["}", ")"]:
        return False  # the last statement of a GNU `({ ...; a = b; })`: its value
    return before[-1].spelling in (";", "{", "}", ")", "else", "do", ":")


class CopyFinder:
    """Recognises rewritable struct copies. `pure(c)` says evaluating `c` has no side
    effects, `tokens(c)` gives its tokens, `src(c)` its text, `relevant(t)` whether a
    record type is, or contains, a target type."""

    def __init__(self, lang: str, pure: Callable[[ci.Cursor], bool],
                 tokens: Callable[[ci.Cursor], list[ci.Token]],
                 src: Callable[[ci.Cursor], str], relevant: Callable[[ci.Type], bool]) -> None:
        self.lang = lang
        self.pure = pure
        self.tokens = tokens
        self.src = src
        self.relevant = relevant
        self._trivial: dict[str, bool] = {}

    # ------------------------------------------------------------ checks

    def _lvalue(self, c: ci.Cursor) -> bool:
        """A plain lvalue form: a variable, a member, a subscript or a dereference."""
        p = _peel(c)
        if p.kind not in _LVALUE_KINDS:
            return False
        if p.kind == CK.UNARY_OPERATOR:
            toks = self.tokens(p)
            return bool(toks) and toks[0].spelling == "*"
        if p.kind == CK.DECL_REF_EXPR:  # a `register` variable has no address
            ref = p.referenced
            return ref is not None and ref.kind in (CK.VAR_DECL, CK.PARM_DECL) and \
                ref.storage_class != ci.StorageClass.REGISTER
        return True

    def _operand_problem(self, c: ci.Cursor) -> str | None:
        if not self._lvalue(c):
            return "an operand is not a plain lvalue"
        if not self.pure(c):
            return "an operand has side effects"
        return None

    def trivially_copyable(self, t: ci.Type) -> bool:
        """C++: no virtual functions or bases, no user-provided copy/move/destructor, and
        the same for every base and member of class type."""
        canon = t.get_canonical()
        while canon.kind == TK.CONSTANTARRAY:
            canon = canon.element_type.get_canonical()
        if canon.kind != TK.RECORD:
            return True
        decl = canon.get_declaration()
        usr = str(decl.get_usr())
        if usr in self._trivial:
            return self._trivial[usr]
        self._trivial[usr] = False  # recursion guard
        ok = True
        for k in decl.get_children():
            if k.kind == CK.CXX_BASE_SPECIFIER:
                if any(tok.spelling == "virtual" for tok in self.tokens(k)) or \
                        not self.trivially_copyable(k.type):
                    ok = False
            elif k.kind in (CK.CXX_METHOD, CK.DESTRUCTOR, CK.CONSTRUCTOR):
                if k.kind == CK.CXX_METHOD and k.is_virtual_method():
                    ok = False
                special = k.kind == CK.DESTRUCTOR or (k.kind == CK.CONSTRUCTOR and (
                    k.is_copy_constructor() or k.is_move_constructor())) or (
                    k.kind == CK.CXX_METHOD and (k.is_copy_assignment_operator_method()
                                                 or k.is_move_assignment_operator_method()))
                if k.kind == CK.DESTRUCTOR and k.is_virtual_method():
                    ok = False
                if special and not (k.is_default_method() or k.is_deleted_method()):
                    ok = False
            elif k.kind == CK.FIELD_DECL and not self.trivially_copyable(k.type):
                ok = False
            if not ok:
                break
        self._trivial[usr] = ok
        return ok

    def _same_record(self, a: ci.Type, b: ci.Type) -> bool:
        ua = _record_usr(a)
        return ua is not None and ua == _record_usr(b)

    # ------------------------------------------------------------ forms

    def c_assignment(self, c: ci.Cursor, op: str | None) -> CopyEdit | Skipped | None:
        """C `a = b` with record operands."""
        kids = list(c.get_children())
        if op != "=" or len(kids) != 2 or _record_usr(c.type) is None \
                or not self.relevant(c.type):
            return None
        lhs, rhs = kids
        why = self._operand_problem(lhs) or self._operand_problem(rhs)
        if why:
            return Skipped(c.extent.start.offset, why)
        a, b = self.src(lhs), self.src(_peel(rhs))
        head = ("__extension__ ({ "
                f"__typeof__({a}) *__cachefit_d = &({a}); "
                f"__typeof__({b}) *__cachefit_s = &({b}); ")
        if lhs.type.is_volatile_qualified() or _peel(rhs).type.is_volatile_qualified() \
                or not _statement(c):
            # Volatile accesses, and an assignment whose value is used, stay the
            # compiler's: note the copy, then assign.
            text = head + ("__cachefit_note_copy((void *)__cachefit_d, "
                           "(const void *)__cachefit_s, sizeof *__cachefit_d); "
                           "*__cachefit_d = *__cachefit_s; })")
        else:
            # The runtime records and makes the copy (memmove: `*p = *p` is allowed), so
            # the optimiser cannot turn it into loads and stores sancov would see too.
            text = head + ("__cachefit_memmove((void *)__cachefit_d, "
                           "(const void *)__cachefit_s, sizeof *__cachefit_d); (void)0; })")
        return CopyEdit(c.extent.start.offset, c.extent.end.offset, text)

    def cxx_assignment(self, c: ci.Cursor) -> CopyEdit | Skipped | None:
        """C++ `a = b` calling a trivial copy or move assignment operator."""
        if self.lang != "c++" or c.spelling != "operator=":
            return None
        method = c.referenced
        if method is None or method.kind != CK.CXX_METHOD or not (
                method.is_copy_assignment_operator_method()
                or method.is_move_assignment_operator_method()):
            return None
        kids = [k for k in c.get_children() if k.kind.is_expression()]
        if len(kids) != 3 or not self.relevant(c.type):
            return None
        lhs, _callee, rhs = kids
        if not self._same_record(lhs.type, rhs.type) or not self.trivially_copyable(lhs.type):
            return None
        why = self._operand_problem(lhs) or self._operand_problem(rhs)
        if why:
            return Skipped(c.extent.start.offset, why)
        # A C-like class has no tail padding another object could live in, so the runtime
        # can make the whole copy (opaque: the optimiser cannot turn it into loads and
        # stores sancov would see too); any other keeps the compiler's operator=.
        helper = "__cachefit_memmove_t" if self.c_like(lhs.type) and not (
            lhs.type.is_volatile_qualified() or _peel(rhs).type.is_volatile_qualified()) \
            else "__cachefit_assign_t"
        text = f"{helper}({self.src(lhs)}, {self.src(_peel(rhs))})"
        return CopyEdit(c.extent.start.offset, c.extent.end.offset, text)

    def c_like(self, t: ci.Type) -> bool:
        """C++: a class laid out as in C (POD for the purpose of layout, whose tail padding
        the ABI never reuses): no bases, no constructors, destructor or user-declared
        copy/move assignment, only public fields without initialisers, every field of
        class type C-like too."""
        canon = t.get_canonical()
        while canon.kind == TK.CONSTANTARRAY:
            canon = canon.element_type.get_canonical()
        if canon.kind != TK.RECORD:
            return True
        if not canon.is_pod():
            return False
        for k in canon.get_declaration().get_children():
            if k.kind in (CK.CXX_BASE_SPECIFIER, CK.CONSTRUCTOR, CK.DESTRUCTOR):
                return False
            if k.kind == CK.CXX_METHOD and (k.is_copy_assignment_operator_method()
                                            or k.is_move_assignment_operator_method()
                                            or k.is_virtual_method()):
                return False
            if k.kind == CK.FIELD_DECL and (
                    k.access_specifier != ci.AccessSpecifier.PUBLIC
                    or any(e.kind.is_expression() for e in k.get_children())
                    or not self.c_like(k.type)):
                return False
        return True

    def initialisation(self, var: ci.Cursor) -> CopyEdit | Skipped | None:
        """A local record variable copy-initialised from an lvalue of its own type."""
        if _record_usr(var.type) is None or not self.relevant(var.type):
            return None
        toks = self.tokens(var)
        if var.storage_class in (ci.StorageClass.STATIC, ci.StorageClass.EXTERN,
                                 ci.StorageClass.REGISTER) or any(
                t.spelling in _NOT_LOCAL for t in toks):
            return None
        # The source must be written after the name (not, say, a range-for's range).
        names = [i for i, t in enumerate(toks) if t.spelling == var.spelling]
        if not names or names[0] + 1 >= len(toks) or \
                toks[names[0] + 1].spelling not in ("=", "(", "{"):
            return None
        after_name = toks[names[0] + 1].extent.end.offset
        exprs = [k for k in var.get_children() if k.kind.is_expression()]
        if not exprs:
            return None
        init = exprs[-1]
        if self.lang == "c++":
            ctor_call = _peel(init)
            ctor = ctor_call.referenced
            if ctor_call.kind != CK.CALL_EXPR or ctor is None or ctor.kind != CK.CONSTRUCTOR \
                    or not (ctor.is_copy_constructor() or ctor.is_move_constructor()):
                return None
            args = list(ctor_call.get_arguments())
            if len(args) != 1 or not self._same_record(var.type, args[0].type) \
                    or not self.trivially_copyable(var.type):
                return None
            source = args[0]
        else:
            source = init
            if source.kind == CK.INIT_LIST_EXPR or not self._same_record(var.type,
                                                                         source.type):
                return None
        if not after_name <= source.extent.start.offset < var.extent.end.offset \
                or self._temporary(_peel(source)):
            return None  # a temporary is no object: there is no read to record
        why = self._operand_problem(source)
        if why:
            return Skipped(var.extent.start.offset, why)
        e = _peel(source)
        if e.type.is_volatile_qualified():
            return None
        # Only the read is recorded: the variable being initialised cannot be a registered
        # object yet (registration comes after its declaration).
        return self._copied(e)

    # ------------------------------------------------------------ by value

    def arguments(self, call: ci.Cursor) -> list[CopyEdit | Skipped]:
        """The arguments of `call` that copy an lvalue into a by-value parameter."""
        out: list[CopyEdit | Skipped] = []
        dependent = self.lang == "c++" and call.type.kind == TK.DEPENDENT
        for arg in call.get_arguments():
            if dependent:
                p = _peel(arg)
                if _record_usr(p.type) is not None and self.relevant(p.type):
                    out.append(Skipped(p.extent.start.offset,
                                       "the call depends on a template parameter"))
                continue
            got = self.by_value(arg)
            if got is not None:
                out.append(got)
        return out

    def return_value(self, ret: ci.Cursor) -> CopyEdit | Skipped | None:
        """`return E;` copying an lvalue E into the return value."""
        exprs = [k for k in ret.get_children() if k.kind.is_expression()]
        return self.by_value(exprs[0]) if len(exprs) == 1 else None

    def by_value(self, e: ci.Cursor) -> CopyEdit | Skipped | None:
        """`e` initialises a fresh object (a parameter, the return value) by a copy."""
        return self._cxx_by_value(e) if self.lang == "c++" else self._c_by_value(e)

    def _c_by_value(self, e: ci.Cursor) -> CopyEdit | Skipped | None:
        p = _peel(e)
        if _record_usr(p.type) is None or not self.relevant(p.type) \
                or p.type.is_volatile_qualified() or self._temporary(p):
            return None
        why = self._operand_problem(p)
        if why:
            return Skipped(p.extent.start.offset, why)
        return self._copied(p)

    def _cxx_by_value(self, e: ci.Cursor) -> CopyEdit | Skipped | None:
        ctor_call = _peel(e)
        ctor = ctor_call.referenced
        if ctor_call.kind != CK.CALL_EXPR or ctor is None or ctor.kind != CK.CONSTRUCTOR \
                or not (ctor.is_copy_constructor() or ctor.is_move_constructor()):
            return None  # no construction: guaranteed copy elision of a prvalue
        args = list(ctor_call.get_arguments())
        t = ctor_call.type
        if len(args) != 1 or _record_usr(t) is None or not self.relevant(t):
            return None
        source = _peel(args[0])
        if not self._same_record(t, source.type) or source.type.is_volatile_qualified():
            return None  # slicing, or a volatile source
        if not ctor.is_default_method() or not self.trivially_copyable(t):
            return None  # a user-provided copy: its own accesses are traced
        if self._temporary(source):
            return None  # C++14 elidable copy of a temporary: no object is copied
        if ctor.is_move_constructor() and self._lvalue(source):
            return None  # `return local;`: an implicit move of a local (or NRVO)
        why = self._operand_problem(args[0])
        if why:
            return Skipped(source.extent.start.offset, why)
        return self._copied(source)

    def _copied(self, e: ci.Cursor) -> CopyEdit:
        """Replace the lvalue `e` (pure) by an lvalue (C++) or value (C) of a copy made by
        `__cachefit_memcpy` into a temporary: the runtime records the read of `e`'s bytes
        (its write lands in the temporary, no object), and the compiler's own copy then
        reads the temporary, which is outside every object."""
        s = self.src(e)
        if self.lang == "c++":
            text = f"__cachefit_byval_t({s})"
        else:  # `({ E; })` has E's type without qualifiers; typeof does not evaluate E
            text = ("__extension__ ({ "
                    f"__typeof__(__extension__ ({{ {s}; }})) __cachefit_v; "
                    f"__cachefit_memcpy((void *)&__cachefit_v, (const void *)&({s}), "
                    "sizeof __cachefit_v); __cachefit_v; })")
        return CopyEdit(e.extent.start.offset, e.extent.end.offset, text)

    @staticmethod
    def _temporary(c: ci.Cursor) -> bool:
        """A prvalue of record type: a call returning by value, a compound literal, a
        temporary object built by a constructor other than a copy or move."""
        if c.kind in (CK.COMPOUND_LITERAL_EXPR, CK.INIT_LIST_EXPR):
            return True
        if c.kind != CK.CALL_EXPR:
            return False
        f = c.referenced
        if f is not None and f.kind == CK.CONSTRUCTOR:
            return not (f.is_copy_constructor() or f.is_move_constructor())
        if f is None or f.kind not in _FUNCTION_KINDS:
            return True  # through a pointer: C calls are prvalues, so are most C++ ones
        return f.result_type.get_canonical().kind not in _REFERENCES
