"""The record as a member of a union: what the union's other members read of it.

When the record T is the type of a member of a union U (a named union, or an anonymous union
inside a struct), the other members of U overlay T's bytes, and code may write T and read
another member (or the reverse):

* a byte array (`unsigned char raw[sizeof(struct hdr)]`, `uint8_t`, `std::byte`, any length)
  reads T's bytes as raw data (a wire format, a checksum): no order keeps them, so it is
  refused like raw I/O of the record — when the code names that member somewhere (the
  caller checks: padding, `union { T t; char pad[64]; }`, is never read);
* another struct S: C11 6.5.2.3p6 lets code read the *common initial sequence* of T and S
  (the longest prefix of members, in declaration order, of the same type, and for
  bit-fields of the same width) through either (Xlib/SDL events: `e.key.serial` written,
  `e.any.serial` read). Those members of T are pinned;
* a member of the type T starts with (`int type` over every event's `int type`; also a
  struct or union starting with it, or T's first member being a struct or array starting
  with that type): T's first member is pinned.

Members of U of the record's own type (or arrays of it) change with it and need nothing.
Reads declarations only; never edits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.frontend.clang_util import (
    CK,
    children,
    is_anonymous_member,
    is_anonymous_name,
    is_byte_type,
    kind_of,
    location,
)
from cachefit.model import Record
from cachefit.reorder.constraints import OrderConstraint, Refusal

_ARRAYS = (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
           ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY)
_RECORD_DECLS = (CK.STRUCT_DECL, CK.UNION_DECL, CK.CLASS_DECL)


@dataclass(frozen=True)
class _Member:
    """One member of a record or union in declaration order: a field (maybe an unnamed
    bit-field) or an anonymous struct/union member (`name` None, `anonymous` True)."""

    cursor: ci.Cursor
    type: ci.Type                   # canonical
    name: str | None
    width: int | None               # bit-field width
    anonymous: bool


def _members(decl: ci.Cursor) -> list[_Member]:
    out: list[_Member] = []
    for c in children(decl):
        k = kind_of(c)
        if k == CK.FIELD_DECL and not (c.spelling and is_anonymous_name(c.spelling)):
            width = c.get_bitfield_width() if c.is_bitfield() else None
            out.append(_Member(c, c.type.get_canonical(), c.spelling or None, width, False))
        elif (k == CK.FIELD_DECL or k in _RECORD_DECLS and c.is_definition()
              and is_anonymous_member(c)):
            t = c.type.get_canonical()
            if not any(m.anonymous and m.type == t for m in out):
                out.append(_Member(c, t, None, None, True))
    return out


def _definition(t: ci.Type) -> ci.Cursor | None:
    decl = t.get_canonical().get_declaration()
    if decl is None or kind_of(decl) not in _RECORD_DECLS:
        return None
    full: ci.Cursor | None = decl.get_definition()
    return full


def _element(t: ci.Type) -> ci.Type:
    """The innermost element type of an array type (the type itself otherwise)."""
    c = t.get_canonical()
    while c.kind in _ARRAYS:
        c = c.element_type.get_canonical()
    return c


def _starts(t: ci.Type, depth: int = 0) -> list[ci.Type]:
    """The canonical types an object of type `t` begins with: `t`, the element type of an
    array, the first member of a struct (without bases), every member of a union."""
    c = t.get_canonical()
    out = [c]
    if depth > 8:
        return out
    if c.kind in _ARRAYS:
        return out + _starts(c.element_type, depth + 1)
    if c.kind != ci.TypeKind.RECORD:
        return out
    decl = _definition(c)
    if decl is None or any(kind_of(b) == CK.CXX_BASE_SPECIFIER for b in children(decl)):
        return out
    members = _members(decl)
    heads = members if kind_of(decl) == CK.UNION_DECL else members[:1]
    for m in heads:
        out += _starts(m.type, depth + 1)
    return out


def _overlap(a: list[ci.Type], b: list[ci.Type]) -> bool:
    return any(x == y for x in a for y in b)


def _union_name(decl: ci.Cursor) -> str:
    spelling = decl.type.spelling
    if is_anonymous_member(decl) or is_anonymous_name(spelling) or "(unnamed" in spelling:
        parent = decl.semantic_parent
        where = f" in {parent.type.spelling}" if parent is not None and \
            kind_of(parent) in _RECORD_DECLS else ""
        return f"an anonymous union{where}"
    return spelling if spelling.startswith("union ") else f"union {spelling}"


def _member_name(m: _Member) -> str:
    if m.name:
        return m.name
    return "an anonymous union" if kind_of(m.cursor) == CK.UNION_DECL or \
        m.type.get_declaration().kind == CK.UNION_DECL else "an anonymous struct"


def _is_byte_array(t: ci.Type) -> bool:
    return t.kind in _ARRAYS and is_byte_type(_element(t)) and \
        _element(t).kind != ci.TypeKind.VOID


def _common_prefix(own: list[_Member], other: list[_Member]) -> list[_Member]:
    """The common initial sequence of two structs' members (C11 6.5.2.3p6), as `own`'s."""
    out: list[_Member] = []
    for a, b in zip(own, other, strict=False):
        if a.anonymous or b.anonymous or a.type != b.type or a.width != b.width:
            break
        out.append(a)
    return out


def union_overlays(union: ci.Cursor, record: Record,
                   is_record: Callable[[ci.Type], bool]
                   ) -> tuple[list[OrderConstraint], list[tuple[str, Refusal]]]:
    """Pins, and refusals with the name of the byte array each is for (the caller keeps
    those the code names), for the record as a member of the union definition `union`
    (see the module doc); nothing when the record is not one of its members."""
    members = _members(union)
    mine = [m for m in members if is_record(_element(m.type))]
    if not mine:
        return [], []
    direct = next((m for m in mine if m.type.kind not in _ARRAYS), mine[0])
    own_decl = _definition(_element(direct.type))
    if own_decl is None:
        return [], []
    own = _members(own_decl)
    names = {f.name for f in record.fields}
    uname = _union_name(union)
    cons: list[OrderConstraint] = []
    refs: list[tuple[str, Refusal]] = []
    head = _head_fields(record)
    head_starts = _starts(own[0].type) if own and head else []
    for m in members:
        if any(m is x for x in mine):
            continue
        loc = location(m.cursor)
        mname = _member_name(m)
        if _is_byte_array(m.type):
            if m.name:
                refs.append((m.name, Refusal(
                    f"{record.name}'s bytes are read as raw data: member {mname} "
                    f"({m.cursor.type.spelling}) of {uname} overlays it, so its layout is "
                    "visible outside", f"serialise the members explicitly, or list "
                    f"{record.name} as ABI in cachefit.toml ([reorder] abi = [...])", loc)))
            continue
        common: list[str] = []
        other = _definition(m.type) if m.type.kind == ci.TypeKind.RECORD else None
        if other is not None and kind_of(other) != CK.UNION_DECL and \
                direct.type.kind not in _ARRAYS:
            common = [p.name for p in _common_prefix(own, _members(other))
                      if p.name is not None and p.name in names]
        if common:
            what = m.cursor.type.spelling if m.name else mname
            them = "it" if len(common) == 1 else "them"
            cons.append(OrderConstraint(
                "pin", tuple(common), f"common initial sequence with {what} in {uname}: "
                f"code may read {them} through {mname}", loc))
        elif head and (is_byte_type(m.type) or _overlap(_starts(m.type), head_starts)):
            cons.append(OrderConstraint(
                "pin", head, f"member {mname} ({m.cursor.type.spelling}) of {uname} "
                f"overlays it: code may read it through {mname}", loc))
    return cons, refs


def _head_fields(record: Record) -> tuple[str, ...]:
    """The record's first member as fields to pin: the first field, or every field of the
    anonymous struct/union it belongs to; nothing when it is not at offset 0 (bases)."""
    if not record.fields or record.bases or record.vptr_offset is not None:
        return ()
    first = record.fields[0]
    if first.offset != 0:
        return ()
    if first.anonymous_parent is None:
        return (first.name,)
    return tuple(f.name for f in record.fields if f.anonymous_parent == first.anonymous_parent)
