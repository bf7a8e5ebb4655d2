"""libclang helpers for flattening: cursor keys, overridden methods, tokens, source bytes.

Everything here is about reading the AST and the source text precisely: byte offsets of
extents, the tokens of a range (libclang's lexer), the declaration a reference names, and the
places the python bindings do not reach (overridden methods, presumed locations).
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Iterator

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.source_text import Tok
from cachefit.model.type_names import unqualified_type_key

CK = ci.CursorKind
TK = ci.TokenKind

RECORD_KINDS = (CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL)
METHOD_KINDS = (CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR, CK.CONVERSION_FUNCTION,
                CK.FUNCTION_TEMPLATE)
TYPE_KINDS = (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL, CK.TYPE_ALIAS_TEMPLATE_DECL, CK.ENUM_DECL,
              CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL, CK.CLASS_TEMPLATE)
TEMPLATE_PARAM_KINDS = (CK.TEMPLATE_TYPE_PARAMETER, CK.TEMPLATE_NON_TYPE_PARAMETER,
                        CK.TEMPLATE_TEMPLATE_PARAMETER)

_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    lib = ci.conf.lib
    lib.clang_getOverriddenCursors.argtypes = [
        ci.Cursor, ctypes.POINTER(ctypes.POINTER(ci.Cursor)), ctypes.POINTER(ctypes.c_uint)]
    lib.clang_getOverriddenCursors.restype = None
    lib.clang_disposeOverriddenCursors.argtypes = [ctypes.POINTER(ci.Cursor)]
    lib.clang_disposeOverriddenCursors.restype = None
    lib.clang_getPresumedLocation.argtypes = [
        ci.SourceLocation, ctypes.POINTER(ci._CXString), ctypes.POINTER(ctypes.c_uint),
        ctypes.POINTER(ctypes.c_uint)]
    lib.clang_getPresumedLocation.restype = None
    _registered = True


def _copy_cursor(raw: ci.Cursor, like: ci.Cursor) -> ci.Cursor:
    c = ci.Cursor()
    ctypes.memmove(ctypes.byref(c), ctypes.byref(raw), ctypes.sizeof(ci.Cursor))
    c._tu = like._tu
    return c


def overridden(cursor: ci.Cursor) -> list[ci.Cursor]:
    """The methods `cursor` directly overrides (clang_getOverriddenCursors)."""
    _register()
    out = ctypes.POINTER(ci.Cursor)()
    n = ctypes.c_uint()
    ci.conf.lib.clang_getOverriddenCursors(cursor, ctypes.byref(out), ctypes.byref(n))
    result = [_copy_cursor(out[i], cursor) for i in range(n.value)]
    if n.value:
        ci.conf.lib.clang_disposeOverriddenCursors(out)
    return result


def specialized_template(cursor: ci.Cursor) -> ci.Cursor | None:
    """The template (or member of the template) that `cursor` is an instance of, if any."""
    c = ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)
    if c is None or c.kind.is_invalid():
        return None
    return c


def is_name_qualifier(child: ci.Cursor, decl: ci.Cursor) -> bool:
    """Whether `child` (a child of the declaration `decl`) is a reference in the
    nested-name-specifier of `decl`'s own name: the `Outer::` of `class Outer::Inner {...}`
    or of `void Outer::f()`. Such references come before the declared name."""
    if child.kind not in (CK.TYPE_REF, CK.NAMESPACE_REF, CK.TEMPLATE_REF):
        return False
    f = file_of(decl)
    if f is None or file_of(child) != f:
        return False
    name = decl.location.offset
    start, end = child.extent.start.offset, child.extent.end.offset
    if end > name or start < decl.extent.start.offset:
        return False
    # the qualifier: `X::`, `X<...>::` repeated, right before the name
    tu = decl.translation_unit
    rng = ci.SourceRange.from_locations(decl.extent.start, decl.location)
    toks = [t for t in tu.get_tokens(extent=rng) if t.extent.end.offset <= name]
    i = len(toks)
    qstart = name
    while i >= 2 and toks[i - 1].spelling == "::":
        j = i - 2
        if toks[j].spelling in (">", ">>"):
            depth = 0
            while j >= 0:
                s = toks[j].spelling
                depth += {">": 1, ">>": 2, "<": -1}.get(s, 0)
                if depth <= 0 and s == "<":
                    break
                j -= 1
            j -= 1
        if j < 0 or toks[j].kind != TK.IDENTIFIER:
            break
        qstart = toks[j].extent.start.offset
        i = j
    return start >= qstart


def is_virtual_base(spec: ci.Cursor) -> bool:
    return bool(ci.conf.lib.clang_isVirtualBase(spec))


def presumed(cursor_or_loc: ci.Cursor | ci.SourceLocation) -> Location:
    """The location as the user wrote it (line markers of a preprocessed file honoured)."""
    _register()
    loc = cursor_or_loc.location if isinstance(cursor_or_loc, ci.Cursor) else cursor_or_loc
    name = ci._CXString()
    line = ctypes.c_uint()
    col = ctypes.c_uint()
    ci.conf.lib.clang_getPresumedLocation(loc, ctypes.byref(name), ctypes.byref(line),
                                          ctypes.byref(col))
    fname = ci.conf.lib.clang_getCString(name)
    fname = fname.decode() if isinstance(fname, bytes) else (fname or "")
    ci.conf.lib.clang_disposeString(name)
    if not fname and loc.file is not None:
        fname = loc.file.name
    return Location(fname or "<unknown>", line.value, col.value)


def namespaces(cursor: ci.Cursor, semantic: bool) -> list[str]:
    """The named and anonymous namespaces around `cursor`, outermost first (through its
    semantic or its lexical parents)."""
    out = []
    c = cursor.semantic_parent if semantic else cursor.lexical_parent
    while c is not None and c.kind != CK.TRANSLATION_UNIT:
        if c.kind == CK.NAMESPACE:
            out.append(c.spelling)
        c = c.semantic_parent if semantic else c.lexical_parent
    return list(reversed(out))


Key = tuple[str, int]


def key_of(cursor: ci.Cursor) -> Key | None:
    """A key naming a declaration across its redeclarations and template instantiations.

    The canonical declaration's file and byte offset: an instantiated member and its member
    template pattern share it (instantiations point at the pattern's location).
    """
    if cursor is None:
        return None
    c = cursor.canonical if cursor.kind.is_declaration() else cursor
    loc = c.location
    if loc.file is None:
        return None
    return (norm_path(loc.file.name), loc.offset)


def loc_key(cursor: ci.Cursor) -> Key | None:
    loc = cursor.location
    if loc.file is None:
        return None
    return (norm_path(loc.file.name), loc.offset)


@functools.lru_cache(maxsize=4096)
def norm_path(name: str) -> str:
    """One spelling per file (absolute, normalized), whichever unit named it."""
    return os.path.normpath(os.path.abspath(name))


def file_of(cursor: ci.Cursor) -> str | None:
    f = cursor.extent.start.file
    return norm_path(f.name) if f is not None else None


def span(cursor: ci.Cursor) -> tuple[int, int]:
    ext = cursor.extent
    return ext.start.offset, ext.end.offset


class Source:
    """Bytes and tokens of the files of one translation unit (unsaved contents honoured)."""

    def __init__(self, tu: ci.TranslationUnit, unsaved: dict[str, bytes] | None = None) -> None:
        self.tu = tu
        self.unsaved = dict(unsaved or {})
        self._bytes: dict[str, bytes] = {}
        self._tokens: dict[tuple[str, int, int], list[Tok]] = {}

    def data(self, file: str) -> bytes:
        if file not in self._bytes:
            if file in self.unsaved:
                self._bytes[file] = self.unsaved[file]
            else:
                with open(file, "rb") as fh:
                    self._bytes[file] = fh.read()
        return self._bytes[file]

    def text(self, file: str, start: int, end: int) -> str:
        return self.data(file)[start:end].decode(errors="surrogateescape")

    def tokens(self, file: str, start: int, end: int) -> list[Tok]:
        """The tokens that start in ``[start, end)`` of `file`."""
        end = min(end, len(self.data(file)))
        start = max(0, min(start, end))
        key = (file, start, end)
        if key not in self._tokens:
            f = self.tu.get_file(file)
            rng = ci.SourceRange.from_locations(
                ci.SourceLocation.from_offset(self.tu, f, start),
                ci.SourceLocation.from_offset(self.tu, f, end))
            toks = []
            for t in self.tu.get_tokens(extent=rng):
                ext = t.extent
                s, e = ext.start.offset, ext.end.offset
                if start <= s < end:
                    toks.append(Tok(t.kind.name, t.spelling, s, e))
            self._tokens[key] = toks
        return self._tokens[key]

    def cursor_tokens(self, cursor: ci.Cursor) -> list[Tok]:
        f = file_of(cursor)
        s, e = span(cursor)
        return self.tokens(f, s, e) if f else []

    def next_token(self, file: str, offset: int, limit: int = 4096) -> Tok | None:
        """The first token starting at or after `offset`."""
        data = self.data(file)
        end = min(len(data), offset + limit)
        toks = self.tokens(file, offset, end) if offset < end else []
        return toks[0] if toks else None

    def prev_token(self, file: str, offset: int, limit: int = 4096) -> Tok | None:
        """The last token ending at or before `offset`."""
        start = max(0, offset - limit)
        toks = [t for t in self.tokens(file, start, offset) if t.end <= offset]
        return toks[-1] if toks else None


def matching(toks: list[Tok], i: int) -> int:
    """Index of the token closing the bracket opened at ``toks[i]`` ((, [, {, or <)."""
    opening = toks[i].spelling
    if opening == "<":
        return matching_angle(toks, i)
    pairs = {"(": ")", "[": "]", "{": "}"}
    close = pairs[opening]
    depth = 0
    for j in range(i, len(toks)):
        s = toks[j].spelling
        if toks[j].is_punct and s == opening:
            depth += 1
        elif toks[j].is_punct and s == close:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced brackets")


def matching_angle(toks: list[Tok], i: int) -> int:
    """Index of the `>` closing the template argument list opened at ``toks[i]``."""
    depth = 0
    paren = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if not t.is_punct:
            continue
        s = t.spelling
        if s in ("(", "[", "{"):
            paren += 1
        elif s in (")", "]", "}"):
            paren -= 1
        elif paren == 0 and s == "<":
            depth += 1
        elif paren == 0 and s == ">":
            depth -= 1
            if depth == 0:
                return j
        elif paren == 0 and s == ">>":
            depth -= 2
            if depth <= 0:
                return j
    raise ValueError("unbalanced template argument list")


def split_top_level(toks: list[Tok], sep: str = ",") -> list[list[Tok]]:
    """Split a token list at top-level separators (outside (), [], {} and <>)."""
    parts: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        s = t.spelling
        if t.is_punct and s in ("(", "[", "{", "<"):
            depth += 1
        elif t.is_punct and s in (")", "]", "}", ">"):
            depth -= 1
        elif t.is_punct and s == ">>":
            depth -= 2
        if t.is_punct and s == sep and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def walk(cursor: ci.Cursor) -> Iterator[ci.Cursor]:
    """All descendants of `cursor` (pre-order), not `cursor` itself."""
    for child in cursor.get_children():
        yield child
        yield from walk(child)


def walk_with_parents(cursor: ci.Cursor, parents: tuple[ci.Cursor, ...] = ()
                      ) -> Iterator[tuple[ci.Cursor, tuple[ci.Cursor, ...]]]:
    chain = (*parents, cursor)
    for child in cursor.get_children():
        yield child, chain
        yield from walk_with_parents(child, chain)


def strip_type(t: ci.Type) -> tuple[ci.Type, bool]:
    """The innermost type under pointers, references and arrays; whether one was a pointer
    or a reference."""
    t = t.get_canonical()
    indirect = False
    while True:
        k = t.kind
        if k in (ci.TypeKind.POINTER, ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
            indirect = True
            t = t.get_pointee().get_canonical()
        elif k in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                   ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY):
            t = t.element_type.get_canonical()
        elif k == ci.TypeKind.MEMBERPOINTER:
            indirect = True
            t = t.get_pointee().get_canonical()
        else:
            return t, indirect


def record_key(t: ci.Type) -> str | None:
    """The canonical spelling of a record type (without cv and kind keyword), else None."""
    t = t.get_canonical()
    if t.kind != ci.TypeKind.RECORD:
        return None
    return unqualified_type_key(t.spelling)
