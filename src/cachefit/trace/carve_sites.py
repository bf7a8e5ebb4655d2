"""Objects carved out of a bigger block (issue 27 item 2), found in a unit's AST.

A `T *` made by a cast or by pointer arithmetic into memory that is not yet an object
(SQLite's `pCx->uc.pCursor = (BtCursor *)&pMem->z[ROUND8P(sizeof(VdbeCursor)) + ...]`,
a bump allocator's `(struct item *)(pool->base + pool->used)`, a record placed after a
header in a `void *` blob) is registered as an object of T, `sizeof(T)` bytes, where the
code stores it into a `T *` variable or member or returns it as `T *`. The unit
instrumenter (cachefit.trace.unit_instrument) asks `carved_value` about each initialiser,
assignment and return and wraps the value it names in the runtime's registration entry
(`__cachefit_track` with the site's carve flag: runtime/src/cf_alloc.c, cf_carve, which
registers nothing again while an object is registered at that address).

What is a carve: the value converts, explicitly or (C) implicitly, a pointer whose
pointee is no record (void, char and the other integer types: `char *`, `u8 *`,
`void *`) to `T *`, and that pointer is computed into a block: pointer arithmetic
(`(char *)p + n`, `base + used`), the address of an element (`&x[i]` of a byte array) or
a non-record array itself (`(T *)arena`). What is not: a cast of a pointer that already
points to a record (a view of an existing object: `(T *)base_ptr`, `(T *)(void *)&u->m`),
a value straight from a call (an allocation: item 1, cachefit.trace.alloc_sites), a
pointer read from a variable or member with no arithmetic (`T *t = vp;`: a comparator's
or a container's view of an object registered where it was made), an integer made a
pointer (`NULL`, `(T *)addr`).

Nothing here edits text or runs anything: the rule only reads libclang cursors.
"""

from __future__ import annotations

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind

# Conversions looked through, from the value stored down to the pointer it converts.
_CONVERSIONS = {CK.PAREN_EXPR, CK.UNEXPOSED_EXPR, CK.CSTYLE_CAST_EXPR,
                CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR}
# Pointee kinds of "memory" rather than an object: void, the character types and the
# other integer types (u8, u32, u64 arrays of an arena).
_MEMORY = {TK.VOID, TK.CHAR_S, TK.CHAR_U, TK.UCHAR, TK.SCHAR, TK.CHAR16, TK.CHAR32,
           TK.WCHAR, TK.USHORT, TK.SHORT, TK.UINT, TK.INT, TK.ULONG, TK.LONG,
           TK.ULONGLONG, TK.LONGLONG, TK.UINT128, TK.INT128}


def _kids(c: ci.Cursor) -> list[ci.Cursor]:
    return list(c.get_children())


def _memory_pointer(t: ci.Type) -> bool:
    """A pointer to (or an array of) memory rather than records."""
    canon = t.get_canonical()
    if canon.kind == TK.POINTER:
        return canon.get_pointee().get_canonical().kind in _MEMORY
    if canon.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
        return canon.element_type.get_canonical().kind in _MEMORY
    return False


def _operator(c: ci.Cursor, kids: list[ci.Cursor]) -> str:
    """The operator token of a unary or binary operator cursor."""
    toks = list(c.get_tokens())
    if c.kind == CK.UNARY_OPERATOR:
        return toks[0].spelling if toks else ""
    lhs_end = kids[0].extent.end.offset
    for t in toks:
        if t.extent.start.offset >= lhs_end:
            return str(t.spelling)
    return ""


def _computed(e: ci.Cursor) -> bool:
    """Whether `e` (no conversion) computes an address into a block of memory."""
    kids = _kids(e)
    if e.kind == CK.BINARY_OPERATOR and len(kids) == 2:
        # pointer + integer, pointer - integer (not pointer - pointer: an integer)
        return _operator(e, kids) in ("+", "-") and _memory_pointer(e.type)
    if e.kind == CK.UNARY_OPERATOR and len(kids) == 1:
        # &x[i] of a byte array (not &u->member of a record: a view)
        inner = kids[0]
        while inner.kind == CK.PAREN_EXPR and len(_kids(inner)) == 1:
            inner = _kids(inner)[0]
        return _operator(e, kids) == "&" and inner.kind == CK.ARRAY_SUBSCRIPT_EXPR and \
            _memory_pointer(e.type)
    if e.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR):
        # a byte array itself (an arena), not a pointer read from a variable
        return e.type.get_canonical().kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY) and \
            _memory_pointer(e.type)
    return False


def carved_value(value: ci.Cursor, dest: ci.Type) -> bool:
    """Whether `value`, stored into a `dest` (a pointer type) variable or member or
    returned as one, is an object carved out of a bigger block (see the module's
    docstring). The pointee of `dest` is the caller's to check (a traced type, or a
    record holding one)."""
    canon = dest.get_canonical()
    if canon.kind != TK.POINTER or canon.get_pointee().get_canonical().kind != TK.RECORD:
        return False
    e = value
    converted = False
    while e.kind in _CONVERSIONS:
        kids = [k for k in _kids(e) if k.kind.is_expression()]
        if not kids or e.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and len(kids) != 1:
            return False
        inner = kids[-1]
        t = inner.type.get_canonical()
        if t.kind == TK.POINTER and t.get_pointee().get_canonical().kind == TK.RECORD:
            return False        # a record pointer converted: a view of an object
        if _memory_pointer(inner.type):
            converted = True
        e = inner
    return converted and _computed(e)
