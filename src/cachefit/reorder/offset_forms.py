"""Byte positions inside one record as linear forms over symbolic member offsets.

`offsetof(T, a)` is the symbol start(a), `sizeof(p->a)` is end(a) - start(a), `sizeof(T)`
is the symbol size; integer constants fold through the compiler. An address such as
`&p->a` or `(char *)p + offsetof(T, a)` is a base object plus such a form. From these the
analysis sees which byte range of the record an expression denotes, e.g. the length
`sizeof(*p) - offsetof(T, a)` starting at `&p->a` is [start(a), size): everything from `a`
to the end. Forms are computed from libclang cursors and types only.

This module evaluates expressions; it does not decide what a range means for reordering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.frontend.clang_util import (
    CAST_KINDS,
    CK,
    children,
    evaluate_int,
    expr_key,
    first_token,
    is_anonymous_member,
    kind_of,
    pointee,
    strip,
)

Sym = tuple[str, str]        # ("start", field) | ("end", field) | ("size", "")
SIZE: Sym = ("size", "")


@dataclass(frozen=True)
class Form:
    """const + sum(coef * symbol)."""

    terms: tuple[tuple[Sym, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(sym: Sym, coef: int = 1) -> Form:
        return Form(((sym, coef),))

    def _dict(self) -> dict[Sym, int]:
        return dict(self.terms)

    def plus(self, other: Form, sign: int = 1) -> Form:
        d = self._dict()
        for s, c in other.terms:
            d[s] = d.get(s, 0) + sign * c
        return Form(tuple(sorted((s, c) for s, c in d.items() if c)),
                    self.const + sign * other.const)

    def scale(self, k: int) -> Form:
        return Form(tuple((s, c * k) for s, c in self.terms if c * k), self.const * k)

    @property
    def symbolic(self) -> bool:
        return bool(self.terms)

    def single(self) -> Sym | None:
        """The symbol when the form is exactly one symbol (coefficient 1, no constant)."""
        if len(self.terms) == 1 and self.terms[0][1] == 1 and self.const == 0:
            return self.terms[0][0]
        return None

    def is_zero(self) -> bool:
        return not self.terms and self.const == 0


@dataclass(frozen=True)
class Address:
    """A pointer into an object of the record: `base` names the object, `form` the offset."""

    base: str
    form: Form


class OffsetEvaluator:
    """Evaluates expressions about the record with USR `usr` (fields named as the model)."""

    def __init__(self, usr: str, offsets: dict[str, int],
                 is_record: Callable[[ci.Type], bool]) -> None:
        self.usr = usr
        self.offsets = offsets
        self.is_record = is_record

    # -- fields --------------------------------------------------------------------

    def field_name(self, field_cursor: ci.Cursor | None) -> str | None:
        """The model name of a field of the record (through anonymous members), else None."""
        if field_cursor is None or kind_of(field_cursor) != CK.FIELD_DECL:
            return None
        parent = field_cursor.semantic_parent
        while parent is not None and kind_of(parent) in (CK.STRUCT_DECL, CK.UNION_DECL,
                                                         CK.CLASS_DECL):
            if parent.get_usr() == self.usr:
                return field_cursor.spelling or None
            if not is_anonymous_member(parent):
                return None
            parent = parent.semantic_parent
        return None

    def offsetof_member(self, c: ci.Cursor) -> tuple[str, int] | None:
        """For `offsetof(T, m...)`: the record's member m and the extra byte offset."""
        kids = children(c)
        if len(kids) < 2 or kind_of(kids[0]) != CK.TYPE_REF or \
                not self.is_record(kids[0].type):
            return None
        for k in kids[1:]:
            if kind_of(k) == CK.MEMBER_REF:
                name = self.field_name(k.referenced)
                if name is None:
                    return None
                extra = 0
                if len([x for x in kids if kind_of(x) == CK.MEMBER_REF]) > 1 or \
                        len(kids) > 2:
                    total = evaluate_int(c)
                    if total is None or name not in self.offsets:
                        return None
                    extra = total - self.offsets[name]
                return name, extra
        return None

    def member_of_record(self, c: ci.Cursor) -> tuple[str, ci.Cursor] | None:
        """For `obj.m` / `p->m` on the record: (m, the object or pointer expression)."""
        c = strip(c)
        if kind_of(c) != CK.MEMBER_REF_EXPR:
            return None
        name = self.field_name(c.referenced)
        kids = children(c)
        if name is None or not kids:
            return None
        obj = kids[0]
        # Through anonymous members the object is itself an implicit member expression.
        while kind_of(strip(obj)) == CK.MEMBER_REF_EXPR and not strip(obj).spelling:
            inner = children(strip(obj))
            if not inner:
                break
            obj = inner[0]
        return name, obj

    # -- integers -------------------------------------------------------------------

    def int_form(self, c: ci.Cursor) -> Form | None:
        k = kind_of(c)
        if k in (CK.PAREN_EXPR,) or (k == CK.UNEXPOSED_EXPR and len(children(c)) == 1
                                     and kind_of(children(c)[0]) != CK.TYPE_REF):
            return self.int_form(children(c)[-1])
        if k == CK.UNEXPOSED_EXPR:
            m = self.offsetof_member(c)
            if m is not None:
                return Form.of(("start", m[0])).plus(Form(const=m[1]))
        if k == CK.CXX_UNARY_EXPR:
            return self._sizeof(c)
        if k in CAST_KINDS:
            kids = children(c)
            if kids and c.type.get_canonical().kind != ci.TypeKind.POINTER:
                return self.int_form(kids[-1])
        if k == CK.BINARY_OPERATOR:
            return self._binary(c)
        value = evaluate_int(c)
        return Form(const=value) if value is not None else None

    def _sizeof(self, c: ci.Cursor) -> Form | None:
        if first_token(c) in ("alignof", "_Alignof", "__alignof__", "__alignof"):
            v = evaluate_int(c)
            return Form(const=v) if v is not None else None
        kids = children(c)
        operand = strip(kids[-1]) if kids else None
        if operand is not None:
            if self.is_record(operand.type):
                return Form.of(SIZE)
            mem = self.member_of_record(operand)
            if mem is not None:
                return Form.of(("end", mem[0])).plus(Form.of(("start", mem[0])), -1)
        v = evaluate_int(c)
        return Form(const=v) if v is not None else None

    def _binary(self, c: ci.Cursor) -> Form | None:
        kids = children(c)
        if len(kids) != 2:
            return None
        op = c.spelling
        left_t, right_t = kids[0].type.get_canonical(), kids[1].type.get_canonical()
        if op == "-" and left_t.kind == ci.TypeKind.POINTER and \
                right_t.kind == ci.TypeKind.POINTER:
            a, b = self.address(kids[0]), self.address(kids[1])
            pt = pointee(left_t)
            if a is None or b is None or a.base != b.base or pt is None:
                v = evaluate_int(c)
                return Form(const=v) if v is not None else None
            if pt.get_size() != 1:
                return None
            return a.form.plus(b.form, -1)
        if op in ("+", "-"):
            a, b = self.int_form(kids[0]), self.int_form(kids[1])
            if a is None or b is None:
                return None
            return a.plus(b, 1 if op == "+" else -1)
        if op == "*":
            a, b = self.int_form(kids[0]), self.int_form(kids[1])
            if a is None or b is None:
                return None
            if not a.symbolic:
                return b.scale(a.const)
            if not b.symbolic:
                return a.scale(b.const)
            return None
        v = evaluate_int(c)
        return Form(const=v) if v is not None else None

    # -- addresses ------------------------------------------------------------------

    def address(self, c: ci.Cursor) -> Address | None:
        """Where a pointer expression points inside an object of the record, if it does."""
        k = kind_of(c)
        kids = children(c)
        if k == CK.PAREN_EXPR or (k == CK.UNEXPOSED_EXPR and len(kids) == 1):
            inner = self.address(kids[-1]) if kids else None
            if inner is not None or kind_of(strip(c)) != CK.MEMBER_REF_EXPR:
                return inner
        if k in CAST_KINDS and kids:
            return self.address(kids[-1])
        if k == CK.BINARY_OPERATOR and c.spelling in ("+", "-") and len(kids) == 2:
            base = self.address(kids[0])
            pt = pointee(kids[0].type)
            if base is None or pt is None:
                return None
            n = self.int_form(kids[1])
            if n is None:
                return None
            sign = 1 if c.spelling == "+" else -1
            if self.is_record(pt):
                if n.symbolic:
                    return None
                return Address(base.base, base.form.plus(Form.of(SIZE).scale(n.const), sign))
            size = max(pt.get_size(), 1) if pt.kind != ci.TypeKind.VOID else 1
            if size == 1:
                return Address(base.base, base.form.plus(n, sign))
            if n.symbolic:
                return None
            return Address(base.base, base.form.plus(Form(const=n.const * size), sign))
        if k == CK.UNARY_OPERATOR and kids:
            operand = strip(kids[-1])
            pt = pointee(c.type)
            if pt is not None and pt == operand.type.get_canonical():   # address-of
                mem = self.member_of_record(operand)
                if mem is not None:
                    return Address(self._object_key(mem[1]), Form.of(("start", mem[0])))
                if self.is_record(operand.type):
                    return Address(expr_key(operand), Form())
                return None
            # `*pp` with `T **pp` (tmux's `memcpy(*lastgc, &gc, sizeof **lastgc)`) and other
            # unary expressions: a pointer to the record is the start of one
        mem = self.member_of_record(c)
        if mem is not None and c.type.get_canonical().kind in (
                ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
            return Address(self._object_key(mem[1]), Form.of(("start", mem[0])))
        pt = pointee(c.type)
        if pt is not None and self.is_record(pt):
            return Address(expr_key(strip(c, casts=True)), Form())
        return None

    def _object_key(self, obj: ci.Cursor) -> str:
        """The object a member expression reads: `p` for `p->m`, `t` for `t.m`."""
        return expr_key(strip(obj, casts=True))
