"""Struct assignments and copy-initialisations made visible to the clang tracing backend.

clang lowers `*a = *b;`, `struct T x = *p;` and C++ trivial copies/moves of a class to an
llvm.memcpy after sanitizer coverage has run, so the sancov backend sees none of their
loads and stores. For unit_instrument (the source edit pass) this module decides, from
libclang's AST, which of those expressions in an instrumented function can be rewritten
and gives the replacement text: the same copy, preceded by a call of the runtime's
`__cachefit_note_copy(dst, src, n)` (runtime/src/cf_memops.c), which records the read of
the source range and then the write of the destination range the way memcpy does (for
an initialisation only the read: the new variable cannot be a registered object yet).

Handled: C `BinaryOperator '='` with record operands; C++ calls of the trivial copy/move
assignment operator; a local variable of record type initialised (`= E`, `(E)`, `{E}`)
from an lvalue E of the same type with a trivial copy/move constructor. Each operand is
evaluated exactly once. Operands with side effects or that are not lvalues (calls, casts,
temporaries) are left alone and reported as warnings. It never edits text itself, never
touches by-value arguments or returns, and never compiles anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind

NOTE_DECL = "void __cachefit_note_copy(void *, const void *, unsigned long);"

# C++ helpers: one evaluation of each operand, the original operator= / constructor.
CXX_HELPERS = (
    "template <class D, class S> static inline D &__cachefit_assign_t(D &d, S &&s) "
    "{ __cachefit_note_copy((void *)__builtin_addressof(d), "
    "(const void *)__builtin_addressof(s), sizeof(D)); return d = static_cast<S &&>(s); }",
    "template <class S> static inline S &&__cachefit_copy_src_t(S &&s) "
    "{ __cachefit_note_copy((void *)0, (const void *)__builtin_addressof(s), sizeof s); "
    "return static_cast<S &&>(s); }",
)

# Variables whose initialiser must stay as written (constant, static or without address).
_NOT_LOCAL = {"static", "thread_local", "_Thread_local", "__thread", "constexpr", "constinit",
              "register", "extern"}
_LVALUE_KINDS = {CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR,
                 CK.UNARY_OPERATOR}


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
        text = ("__extension__ ({ "
                f"__typeof__({a}) *__cachefit_d = &({a}); "
                f"__typeof__({b}) *__cachefit_s = &({b}); "
                "__cachefit_note_copy((void *)__cachefit_d, (const void *)__cachefit_s, "
                "sizeof *__cachefit_d); *__cachefit_d = *__cachefit_s; })")
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
        text = f"__cachefit_assign_t({self.src(lhs)}, {self.src(_peel(rhs))})"
        return CopyEdit(c.extent.start.offset, c.extent.end.offset, text)

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
        if not after_name <= source.extent.start.offset < var.extent.end.offset:
            return None
        why = self._operand_problem(source)
        if why:
            return Skipped(var.extent.start.offset, why)
        e = _peel(source)
        s = self.src(e)
        # Only the read is noted: the variable being initialised cannot be a registered
        # object yet (registration comes after its declaration), so the destination is 0.
        if self.lang == "c++":
            text = f"__cachefit_copy_src_t({s})"
        else:
            text = ("__extension__ ({ "
                    f"__typeof__({s}) *__cachefit_s = &({s}); "
                    "__cachefit_note_copy((void *)0, (const void *)__cachefit_s, "
                    "sizeof *__cachefit_s); *__cachefit_s; })")
        return CopyEdit(e.extent.start.offset, e.extent.end.offset, text)
