"""Pointer conversions that read the record through another type: its first bytes matter.

`(struct base *)p` on a record whose first member is a `struct base` (the C "base struct"
idiom), the reverse downcast, reading the record through a header type that other records
share, or through a `char *` to its first byte: each needs the members that cover the bytes
the other type reads to stay where they are. When that is just the first member the
constraint is `first`; otherwise the covering members are pinned. A pointer to the record
converted to `void *` (a cast, or implicitly: a callback argument, an assignment) when the
record's first member is itself a record (or an array of records) also keeps that member
first: the `void *` may come back as a pointer to the first member's type (libevent's
deferred callbacks get a `bufferevent_private *` as `void *` and read it as the `struct
bufferevent` it starts with); the arguments of memset/memcpy-like and raw I/O functions
(see memory_uses), of `free` and `realloc`, and of functions or allocator hooks named like
them (`xfree`, `ares_free`, `ares_realloc`) are not such conversions. Other casts to `void *`, byte
pointers used for arithmetic or handed to functions (see memory_uses), `container_of`-style
casts, casts to or from a record whose first member is the record itself (lmdb's
`(MDB_xcursor *)mc`, the xcursor starting with an `MDB_cursor`) or a union with a member
of the record's type (Lua's `obj2gco(t)`: what the union's other members read is
union_overlays' constraint), raw storage (a union of
byte arrays) converted into the record, and casts between C++ base and derived classes
need nothing, and neither do casts where one side is an
incomplete type in that unit (an opaque handle: zlib's `struct internal_state *state`
holding inflate's own state; nothing there reads the record through the other type) —
except a handle converted to or from a pointer to a non-record type, which reads the
record's first bytes without seeing its definition (expat's public macro
`XML_GetUserData(parser)` is `(*(void **)(parser))` on the opaque `XML_Parser`: its first
member `m_userData` stays first).
Reads cursors only.
"""

from __future__ import annotations

from collections.abc import Callable

import clang.cindex as ci

from cachefit.frontend.clang_util import (
    CAST_KINDS,
    CK,
    FUNCTION_KINDS,
    UNARY_POST_DEC,
    UNARY_POST_INC,
    UNARY_PRE_DEC,
    UNARY_PRE_INC,
    children,
    evaluate_int,
    is_anonymous_member,
    is_anonymous_name,
    is_byte_type,
    kind_of,
    location,
    pointee,
    strip,
    unary_operator,
)
from cachefit.model import Record
from cachefit.reorder.constraints import OrderConstraint
from cachefit.reorder.memory_uses import IO_FUNCS, MEMORY_FUNCS, callee_name


def _bases(decl: ci.Cursor, out: set[str]) -> set[str]:
    for c in children(decl):
        if kind_of(c) == CK.CXX_BASE_SPECIFIER:
            b = c.type.get_canonical().get_declaration()
            usr = b.get_usr()
            if usr and usr not in out:
                out.add(usr)
                _bases(b, out)
    return out


def _related(a: ci.Type, b: ci.Type) -> bool:
    """Whether one class derives from the other (a C++ cast then adjusts the pointer)."""
    da, db = a.get_declaration(), b.get_declaration()
    if da is None or db is None:
        return False
    return db.get_usr() in _bases(da, set()) or da.get_usr() in _bases(db, set())


def _user(ancestors: list[ci.Cursor]) -> ci.Cursor | None:
    """The nearest ancestor that is not a parenthesis."""
    for a in reversed(ancestors):
        if kind_of(a) != CK.PAREN_EXPR:
            return a
    return None


_TRANSPARENT = {CK.PAREN_EXPR, CK.UNEXPOSED_EXPR}


def _variable_dereferenced(var: ci.Cursor, ancestors: list[ci.Cursor]) -> bool:
    """Whether a byte-pointer variable is dereferenced (`*p`, `p[i]`) in its function."""
    scope = next((a for a in reversed(ancestors) if kind_of(a) in FUNCTION_KINDS), None)
    if scope is None:
        return True
    stack: list[tuple[ci.Cursor, list[ci.Cursor]]] = [(scope, [])]
    while stack:
        cur, parents = stack.pop()
        if kind_of(cur) == CK.DECL_REF_EXPR and cur.referenced == var:
            user = next((a for a in reversed(parents) if kind_of(a) not in _TRANSPARENT),
                        None)
            if user is not None and kind_of(user) == CK.ARRAY_SUBSCRIPT_EXPR:
                return True
            if user is not None and kind_of(user) == CK.UNARY_OPERATOR:
                operand = pointee(cur.type)
                if operand is not None and user.type.get_canonical() == operand:
                    return True
            continue
        stack.extend((c, [*parents, cur]) for c in children(cur))
    return False


def _index_reach(sub: ci.Cursor, elem: int, whole: int) -> int:
    """The bytes `base[k]` reaches: (k + 1) elements for a constant k, else the record."""
    kids = children(sub)
    k = evaluate_int(kids[1]) if len(kids) == 2 else None
    return whole if k is None or k < 0 else (k + 1) * elem


def _use_reach(expr: ci.Cursor, parents: list[ci.Cursor], elem: int, whole: int,
               sums: bool = True) -> int:
    """How far into the record a use of a scalar pointer to it reads: `p[k]` reaches
    (k + 1) elements, `p[i]` with a variable i, pointer arithmetic (`p + 1`, `p++`,
    `p += n`) the whole record; other uses (`*p`, an argument) its first element. Without
    `sums` (byte pointers: `(char *)p + offsetof(T, m)` is an address that the range
    analysis of memory_uses reads), `p + n` and `p - n` count as the first element."""
    user = next((a for a in reversed(parents) if kind_of(a) not in _TRANSPARENT), None)
    if user is None:
        return elem
    k = kind_of(user)
    if k == CK.ARRAY_SUBSCRIPT_EXPR:
        first = children(user)[0] if children(user) else None
        if first is not None and strip(first) == strip(expr):
            return _index_reach(user, elem, whole)
        return elem
    if k == CK.BINARY_OPERATOR and user.spelling in ("+", "-"):
        return whole if sums else elem
    if k == CK.COMPOUND_ASSIGNMENT_OPERATOR:
        return whole        # p += n, p -= n: only arithmetic applies to a pointer
    if k == CK.UNARY_OPERATOR and unary_operator(user) in (
            UNARY_POST_INC, UNARY_POST_DEC, UNARY_PRE_INC, UNARY_PRE_DEC):
        return whole
    return elem


def _reach(cast: ci.Cursor, ancestors: list[ci.Cursor], elem: int, whole: int,
           sums: bool = True) -> int:
    """How many bytes of the record a conversion to a pointer to a scalar reads: through
    the converted pointer itself, or through the local variable it initialises or is
    assigned to, wherever the function uses that variable (memcached-style statistics:
    `uint64_t *p = (uint64_t *)&st; p[1]` reads the second member, not only the first)."""
    reach = _use_reach(cast, ancestors, elem, whole, sums)
    user = _user(ancestors)
    var = None
    if user is not None and kind_of(user) == CK.VAR_DECL:
        var = user
    elif user is not None and kind_of(user) == CK.BINARY_OPERATOR and user.spelling == "=":
        lhs = strip(children(user)[0], casts=False) if children(user) else None
        if lhs is not None and kind_of(lhs) == CK.DECL_REF_EXPR:
            var = lhs.referenced
    if var is None:
        return reach
    scope = next((a for a in reversed(ancestors) if kind_of(a) in FUNCTION_KINDS), None)
    if scope is None:
        return whole
    stack: list[tuple[ci.Cursor, list[ci.Cursor]]] = [(scope, [])]
    while stack and reach < whole:
        cur, parents = stack.pop()
        if kind_of(cur) == CK.DECL_REF_EXPR and cur.referenced == var:
            reach = max(reach, _use_reach(cur, parents, elem, whole, sums))
            continue
        stack.extend((c, [*parents, cur]) for c in children(cur))
    return reach


def _is_storage(t: ci.Type) -> bool:
    """A struct/union whose only members are arrays of bytes: storage, not a layout
    (Pistachio's `union whole_tcb_t { u8_t pad[KTCB_SIZE]; }`, aligned buffers)."""
    c = t.get_canonical()
    if c.kind != ci.TypeKind.RECORD:
        return False
    decl = c.get_declaration()
    fields = [f for f in children(decl) if kind_of(f) == CK.FIELD_DECL]
    bases = [b for b in children(decl) if kind_of(b) == CK.CXX_BASE_SPECIFIER]
    return bool(fields) and not bases and all(
        f.type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY
        and is_byte_type(f.type.get_canonical().element_type) for f in fields)


def cast_constraint(cast: ci.Cursor, ancestors: list[ci.Cursor], record: Record,
                    is_record: Callable[[ci.Type], bool]) -> OrderConstraint | None:
    """The constraint an explicit pointer cast to or from the record needs, if any."""
    if kind_of(cast) not in CAST_KINDS:
        return None
    target = pointee(cast.type)
    kids = children(cast)
    if target is None or not kids:
        return None
    inner = strip(kids[-1], casts=True)
    source = pointee(inner.type)
    if source is None:
        return None
    if is_record(source) and not is_record(target):
        other, upcast = target, True
    elif is_record(target) and not is_record(source):
        other, upcast = source, False
    else:
        return None
    if other.kind == ci.TypeKind.VOID and upcast:
        return void_constraint(cast, ancestors, record, source)
    if other.kind == ci.TypeKind.VOID or other.kind == ci.TypeKind.FUNCTIONPROTO:
        return None
    if not upcast and _is_storage(other):
        return None         # raw storage (a union of byte arrays) turned into the record
    if not record.fields or min(f.offset for f in record.fields) != 0 or record.bases:
        return None
    loc = location(cast)
    first = record.fields[0]
    if is_byte_type(other):
        if not upcast:
            return None     # memory turned into a record (allocation, container_of)
        user = _user(ancestors)
        if user is None:
            return None
        if kind_of(user) == CK.VAR_DECL:
            if not _variable_dereferenced(user, ancestors):
                return None
        elif kind_of(user) not in (CK.UNARY_OPERATOR, CK.ARRAY_SUBSCRIPT_EXPR) and not (
                kind_of(user) == CK.BINARY_OPERATOR and user.spelling == "="):
            return None
        reach = _reach(cast, ancestors, 1, record.size, sums=False)
        covering = tuple(f.name for f in record.fields if f.offset < reach)
        if len(covering) > 1:
            return OrderConstraint("pin", covering, f"{record.name} is read through a "
                                   f"pointer to its bytes, up to byte {reach}", loc)
        return OrderConstraint("first", (first.name,),
                               f"{record.name} is read through a pointer to its first byte",
                               loc)
    if other.kind == ci.TypeKind.RECORD and _related(other, source if upcast else target):
        return None
    if _starts_with_the_record(other, source if upcast else target):
        return None         # its first member is the record: read with the record's layout
    if other.get_canonical().get_size() < 0:
        return None         # handed on as an opaque type: nothing is read through it
    if (source if upcast else target).get_canonical().get_size() < 0 and \
            other.get_canonical().kind == ci.TypeKind.RECORD:
        return None         # an opaque handle holding another record (zlib's state)
    size = max(other.get_size(), 1)
    if upcast and other.get_canonical().kind != ci.TypeKind.RECORD:
        size = max(size, _reach(cast, ancestors, size, record.size))
    covering = tuple(f.name for f in record.fields if f.offset < size)
    star = "*" if other.spelling.endswith("*") else " *"     # `void **`, not `void * *`
    what = (f"a pointer to {record.name} is converted to/from "
            f"{other.spelling}{star}, which reads its first {size} bytes")
    if len(covering) <= 1:
        return OrderConstraint("first", (first.name,), what, loc)
    return OrderConstraint("pin", covering, what, loc)


def _starts_with_the_record(other: ci.Type, record_type: ci.Type, depth: int = 8) -> bool:
    """Whether `other` starts with the record itself: its first member is the record (or
    an array of it, or a record starting so), or it is a union with such a member (every
    member of a union starts at its first byte). lmdb's `struct MDB_xcursor { MDB_cursor
    mx_cursor; ... }` reached by `(MDB_xcursor *)mc` reads the cursor through a member of
    the cursor's own type, which any new order changes alike; Lua's `obj2gco(t)`,
    `&((union GCUnion *)(t))->gc`, casts a `Table *` to a union with a `struct Table h`
    member, whose other members read the table only as the union overlay rules say
    (union_overlays: the common initial sequence is pinned there)."""
    want = record_type.get_canonical().get_declaration().get_usr()
    t = other.get_canonical()
    if depth <= 0 or t.kind != ci.TypeKind.RECORD or not want:
        return False
    decl = t.get_declaration()
    fields = [c for c in children(decl) if kind_of(c) == CK.FIELD_DECL]
    if kind_of(decl) != CK.UNION_DECL:
        fields = fields[:1]
    for field in fields:
        if field.is_bitfield():
            continue
        inner = field.type.get_canonical()
        while inner.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
            inner = inner.element_type.get_canonical()
        if inner.kind == ci.TypeKind.RECORD and inner.get_declaration().get_usr() == want:
            return True
        if _starts_with_the_record(inner, record_type, depth - 1):
            return True
    return False


# Functions whose `void *` parameters take memory as bytes and never hand it back.
_BYTE_CONSUMERS = {*MEMORY_FUNCS, *IO_FUNCS, "free"}


def _releases(name: str) -> bool:
    """A function (or function pointer) that frees or reallocates what it is given, by
    its name: `realloc`, a project's free wrapper or allocator hook (`xfree`, `mm_free`,
    `ares_free`, `ares_realloc`, `kfree`)."""
    low = name.lower()
    return "free" in low or "realloc" in low


def _starts_with_record(record_type: ci.Type) -> bool:
    """Whether the record's first member is a named struct/union/class (or an array of
    them): something a `void *` to the record can be read back as. A member of an unnamed
    struct type (libevent's `TAILQ_ENTRY(evhttp_connection) next`) is not: no code can
    name a pointer to its type."""
    decl = record_type.get_canonical().get_declaration()
    first = next((c for c in children(decl) if kind_of(c) == CK.FIELD_DECL), None)
    if first is None or first.is_bitfield() or is_anonymous_name(first.spelling):
        return False
    t = first.type.get_canonical()
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        t = t.element_type.get_canonical()
    if t.kind != ci.TypeKind.RECORD:
        return False
    inner = t.get_declaration()
    if inner is not None and is_anonymous_name(inner.spelling):
        return False    # an unnamed struct type (TAILQ_ENTRY): no pointer to it to convert to
    return inner is None or not is_anonymous_member(inner)


def void_constraint(expr: ci.Cursor, ancestors: list[ci.Cursor], record: Record,
                    record_type: ci.Type) -> OrderConstraint | None:
    """The `first` constraint for `expr`, a conversion of a pointer to the record (of type
    `record_type`) to `void *`, when the record starts with a record member (see the
    module doc)."""
    if not record.fields or min(f.offset for f in record.fields) != 0 or record.bases:
        return None
    if not _starts_with_record(record_type):
        return None
    user = next((a for a in reversed(ancestors) if kind_of(a) not in _TRANSPARENT), None)
    if user is not None and kind_of(user) == CK.CALL_EXPR and \
            (callee_name(user) in _BYTE_CONSUMERS or _releases(callee_name(user))):
        return None
    first = record.fields[0]
    return OrderConstraint("first", (first.name,),
                           f"a pointer to {record.name} is converted to void * here; code "
                           f"may read it back as its first member ({first.name})",
                           location(expr))


def implicit_void_constraint(expr: ci.Cursor, ancestors: list[ci.Cursor], record: Record,
                             is_record: Callable[[ci.Type], bool]) -> OrderConstraint | None:
    """`void_constraint` for an implicit conversion (`expr` an unexposed expression of type
    `void *` whose operand points to the record), e.g. a callback argument."""
    target = pointee(expr.type)
    if target is None or target.kind != ci.TypeKind.VOID:
        return None
    kids = children(expr)
    if len(kids) != 1:
        return None
    source = pointee(strip(kids[0]).type)
    if source is None or not is_record(source):
        return None
    return void_constraint(expr, ancestors, record, source)
