"""Aggregate initialisers of the record: which member each element initialises, by position.

Finds `{...}` lists (and C++20 `T(a, b)` parenthesised aggregate initialisation) whose type is
the record, and arrays or records of it initialised with elided braces. For each list it maps
elements to the record's direct members the way the language does (positional elements
follow the previous designator), and says whether the list depends on declaration order and
whether `--fix-initializers` can rewrite it (see rewrite/initializers). It never edits.

Rules: `{}` and `{0}` do not depend on order. In C a list with positional elements does;
designated ones do not. In C++ both do: positional ones by position, designated ones because
C++20 requires designators in declaration order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.clang_util import (
    CK,
    PAREN_LIST_INIT_ID,
    children,
    is_anonymous_member,
    is_anonymous_name,
    kind_of,
    location,
    strip,
)
from cachefit.frontend.source_text import Span

SiteKind = Literal["positional", "designated", "paren", "elided"]
_IMPURE = {CK.CALL_EXPR, CK.COMPOUND_ASSIGNMENT_OPERATOR, CK.CXX_NEW_EXPR,
           CK.CXX_DELETE_EXPR, CK.LAMBDA_EXPR, CK.CXX_THROW_EXPR}


@dataclass(frozen=True)
class InitElement:
    """One element: the member it initialises ('' for an anonymous member, None if unknown)."""

    member: str | None
    designated: bool
    span: Span            # the element's text (for a designated one: `.m = value`)
    value: Span           # the value's text
    pure: bool            # no calls, assignments or increments


@dataclass(frozen=True)
class InitSite:
    """An initialiser of the record that depends on its member order."""

    file: str
    kind: SiteKind
    location: Location
    elements: tuple[InitElement, ...]
    cxx: bool
    list_span: Span | None        # `{` .. `}` inclusive, when the braces are in the file
    fixable: bool
    why_not: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.list_span.begin if self.list_span else self.location.line)


def _direct_members(record_type: ci.Type) -> list[str]:
    """Direct members in declaration order as an initialiser sees them (unnamed bit-fields
    skipped, anonymous members as '')."""
    out = []
    for fc in record_type.get_canonical().get_fields():
        if not fc.spelling and fc.is_bitfield():
            continue
        out.append("" if is_anonymous_name(fc.spelling) else fc.spelling)
    return out


def _direct_member_of(field_cursor: ci.Cursor, usr: str) -> str | None:
    """The direct member of the record through which `field_cursor` is reached."""
    cur = field_cursor
    while cur is not None:
        parent = cur.semantic_parent
        if parent is None:
            return None
        if parent.get_usr() == usr:
            named = kind_of(cur) == CK.FIELD_DECL and not is_anonymous_name(cur.spelling)
            return cur.spelling if named else ""
        if not is_anonymous_member(parent):
            return None
        cur = parent
    return None


def _span(c: ci.Cursor) -> Span | None:
    ext = c.extent
    if ext.start.file is None or ext.end.file is None or \
            ext.start.file.name != ext.end.file.name or ext.start.offset >= ext.end.offset:
        return None
    return Span(ext.start.offset, ext.end.offset)


def is_pure(c: ci.Cursor) -> bool:
    """No calls, assignments, increments, allocation or lambdas inside the expression."""
    stack = [c]
    while stack:
        cur = stack.pop()
        k = kind_of(cur)
        if k is None or k in _IMPURE:
            return False
        if k == CK.BINARY_OPERATOR and cur.spelling == "=":
            return False
        if k == CK.UNARY_OPERATOR and any(t.spelling in ("++", "--")
                                          for t in cur.get_tokens()):
            return False
        stack.extend(children(cur))
    return True


def _is_zero_literal(c: ci.Cursor) -> bool:
    c = strip(c)
    return kind_of(c) == CK.INTEGER_LITERAL and [t.spelling for t in c.get_tokens()] == ["0"]


def classify_list(c: ci.Cursor, usr: str, record_type: ci.Type, cxx: bool) -> InitSite | None:
    """The site for an initialiser list `c` of the record, or None if order does not matter."""
    kids = children(c)
    loc = location(c)
    if loc is None:
        return None
    file = loc.file
    if kind_of(c) is None and c._kind_id == PAREN_LIST_INIT_ID:
        return InitSite(file, "paren", loc, (), cxx, _span(c), False,
                        "parenthesised aggregate initialisation cannot be designated")
    if not kids or (len(kids) == 1 and _is_zero_literal(kids[0])):
        return None
    members = _direct_members(record_type)
    elements: list[InitElement] = []
    idx = 0
    fixable, why = True, ""
    positional = False
    for k in kids:
        ks = children(k)
        sp = _span(k)
        if kind_of(k) == CK.UNEXPOSED_EXPR and ks and kind_of(ks[0]) == CK.MEMBER_REF \
                and k.type.kind == ci.TypeKind.VOID:
            name = _direct_member_of(ks[0].referenced, usr)
            value = _span(ks[-1])
            if name is None or name not in members:
                fixable, why = False, "a designator names a nested member"
                idx = len(members)
            else:
                idx = members.index(name) + 1
            if sp is None or value is None:
                fixable, why = False, "the initialiser is written by a macro"
            elements.append(InitElement(name, True, sp or Span(0, 0), value or Span(0, 0),
                                        is_pure(ks[-1])))
            continue
        positional = True
        name = members[idx] if idx < len(members) else None
        if name is None:
            fixable, why = False, "more elements than members (elided braces)"
        elif name == "":
            fixable, why = False, "an element initialises an anonymous struct/union member"
        else:
            fdecl = next((f for f in record_type.get_canonical().get_fields()
                          if f.spelling == name), None)
            if fdecl is not None and _elides_braces(k, fdecl.type):
                fixable, why = False, f"braces around the initialiser of {name} are elided"
        if sp is None:
            fixable, why = False, "the initialiser is written by a macro"
        elements.append(InitElement(name, False, sp or Span(0, 0), sp or Span(0, 0),
                                    is_pure(k)))
        idx += 1
    if not positional and not cxx:
        return None
    return InitSite(file, "positional" if positional else "designated", loc, tuple(elements),
                    cxx, _span(c), fixable, why)


def _elides_braces(element: ci.Cursor, member_type: ci.Type) -> bool:
    """Whether a positional element starts a brace-elided aggregate member."""
    mt = member_type.get_canonical()
    if mt.kind not in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.RECORD):
        return False
    e = strip(element)
    if kind_of(e) == CK.INIT_LIST_EXPR:
        return False
    if mt.kind == ci.TypeKind.CONSTANTARRAY and kind_of(e) == CK.STRING_LITERAL:
        return False
    return e.type.get_canonical() != mt


def elided_site(c: ci.Cursor, usr: str) -> InitSite | None:
    """An array of the record initialised without inner braces (`tcb t[2] = {1, 2, 3, 4}`)."""
    t = c.type.get_canonical()
    if t.kind not in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        return None
    elem = t.get_array_element_type().get_canonical()
    decl = elem.get_declaration()
    if decl is None or decl.get_usr() != usr:
        return None
    for k in children(c):
        e = strip(k)
        if kind_of(e) != CK.INIT_LIST_EXPR and e.type.get_canonical() != elem:
            loc = location(c)
            if loc is None:
                return None
            return InitSite(loc.file, "elided", loc, (), False, _span(c), False,
                            "braces around each element are elided")
    return None
