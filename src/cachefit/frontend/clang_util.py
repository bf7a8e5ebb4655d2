"""Small libclang helpers the analysis needs beyond the Python bindings.

Safe cursor kinds (newer libclang knows kinds the bindings do not), constant evaluation
(`clang_Cursor_Evaluate`), anonymous-member tests, stripping parentheses and casts, and
locations. Nothing here decides anything about reordering.
"""

from __future__ import annotations

import ctypes

import clang.cindex as ci

from cachefit.errors import Location

CK = ci.CursorKind
PAREN_LIST_INIT_ID = 155        # CXCursor_CXXParenListInitExpr (clang 17+)
_EVAL_INT = 1
_registered = False

FUNCTION_KINDS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
                  CK.FUNCTION_TEMPLATE, CK.LAMBDA_EXPR}
"""Cursors that have a body of code: the scope of a local variable or a parameter."""
CAST_KINDS = {CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR,
              CK.CXX_CONST_CAST_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR}


def kind_of(cursor: ci.Cursor) -> CK | None:
    try:
        return cursor.kind
    except ValueError:
        return None


def _register() -> None:
    global _registered
    if _registered:
        return
    lib = ci.conf.lib
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_Cursor_isAnonymousRecordDecl.argtypes = [ci.Cursor]
    lib.clang_Cursor_isAnonymousRecordDecl.restype = ctypes.c_uint
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    _registered = True


# CXUnaryOperatorKind / CXBinaryOperatorKind values (clang-c/Index.h, libclang 17+).
UNARY_POST_INC, UNARY_POST_DEC, UNARY_PRE_INC, UNARY_PRE_DEC = 1, 2, 3, 4
UNARY_DEREF = 6
BINARY_ASSIGN = 22


def unary_operator(cursor: ci.Cursor) -> int:
    """The operator of a unary operator expression (a UNARY_* value; 0 for others),
    without reading its tokens."""
    _register()
    return int(ci.conf.lib.clang_getCursorUnaryOperatorKind(cursor))


def binary_operator(cursor: ci.Cursor) -> int:
    """The operator of a binary operator expression (BINARY_ASSIGN, ...; 0 for others)."""
    _register()
    return int(ci.conf.lib.clang_getCursorBinaryOperatorKind(cursor))


def evaluate_int(cursor: ci.Cursor) -> int | None:
    """The value of a constant integer expression, as the compiler folds it; else None."""
    _register()
    lib = ci.conf.lib
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != _EVAL_INT:
            return None
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)


def is_anonymous_member(record_decl: ci.Cursor) -> bool:
    """An anonymous struct/union member (`struct { int a; };` inside a record)."""
    _register()
    return bool(ci.conf.lib.clang_Cursor_isAnonymousRecordDecl(record_decl))


def is_anonymous_name(spelling: str) -> bool:
    """The spelling of an anonymous member's implicit field ('' or, in libclang 19,
    'union obj::(anonymous at f.c:5:5)')."""
    return not spelling or "(unnamed" in spelling or (
        "(anonymous" in spelling and "namespace)" not in spelling)


def children(cursor: ci.Cursor) -> list[ci.Cursor]:
    return list(cursor.get_children())


def strip(cursor: ci.Cursor, casts: bool = False) -> ci.Cursor:
    """Look through parentheses and implicit conversions (and explicit casts if asked)."""
    while True:
        k = kind_of(cursor)
        kids = children(cursor)
        if k == CK.PAREN_EXPR and kids:
            cursor = kids[-1]
        elif k == CK.UNEXPOSED_EXPR and len(kids) == 1 and kind_of(kids[0]) != CK.TYPE_REF:
            cursor = kids[0]
        elif casts and k in CAST_KINDS and kids:
            cursor = kids[-1]
        else:
            return cursor


def location(cursor: ci.Cursor) -> Location | None:
    loc = cursor.location
    if loc.file is None:
        return None
    return Location(loc.file.name, loc.line, loc.column)


def first_token(cursor: ci.Cursor) -> str:
    for t in cursor.get_tokens():
        return str(t.spelling)
    return ""


def expr_key(cursor: ci.Cursor) -> str:
    """A name for an expression, to tell whether two expressions denote the same object."""
    toks = [t.spelling for t in cursor.get_tokens()]
    if toks:
        return " ".join(toks)
    ext = cursor.extent
    return f"{ext.start.file.name if ext.start.file else ''}:{ext.start.offset}"


def pointee(t: ci.Type) -> ci.Type | None:
    c = t.get_canonical()
    if c.kind == ci.TypeKind.POINTER:
        return c.get_pointee().get_canonical()
    return None


def is_byte_type(t: ci.Type) -> bool:
    """char, signed/unsigned char, std::byte, void."""
    c = t.get_canonical()
    if c.kind in (ci.TypeKind.CHAR_S, ci.TypeKind.CHAR_U, ci.TypeKind.SCHAR, ci.TypeKind.UCHAR,
                  ci.TypeKind.VOID):
        return True
    return c.kind == ci.TypeKind.ENUM and c.spelling in ("std::byte", "byte")
