"""Positional initialisers of the record in code the preprocessor skipped.

A unit is parsed with one configuration's flags; an `#ifdef FASTEST` branch not taken has
no AST, so the initialiser scan (code_scan, init_lists) never sees `{0, 0, fast}` there,
and a reorder would break that configuration (zlib's `configuration_table` under
`-DFASTEST`: a build error; with members of one type, silently wrong values). This module
asks libclang for the ranges the preprocessor skipped, lexes them (tokens only: there is
no syntax tree to ask), and reports each `NAME ... = {` whose first element is not a
designator, `{}` or `{0}`, where NAME is the record's tag or one of its typedef names. It
cannot tell what such a list initialises, so the caller refuses rather than rewrites.
It reads translation units only.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.clang_util import CK, children, kind_of


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]


@functools.cache
def _skipped_api() -> tuple[Any, Any] | None:
    """libclang's clang_getAllSkippedRanges and its dispose function, typed once."""
    lib = ci.conf.lib
    try:
        get = lib.clang_getAllSkippedRanges
        dispose = lib.clang_disposeSourceRangeList
    except AttributeError:
        return None
    get.argtypes = [ci.TranslationUnit]
    get.restype = ctypes.POINTER(_RangeList)
    dispose.argtypes = [ctypes.POINTER(_RangeList)]
    dispose.restype = None
    return get, dispose


def skipped_ranges(tu: ci.TranslationUnit) -> list[ci.SourceRange]:
    """The source ranges the preprocessor skipped in `tu` (every file), outside system
    headers; empty when this libclang cannot say."""
    api = _skipped_api()
    if api is None:
        return []
    get, dispose = api
    found = get(tu)
    if not found:
        return []
    try:
        out = []
        for i in range(found.contents.count):
            r = found.contents.ranges[i]
            if r.start.file is None or r.start.is_in_system_header:
                continue
            # a copy that outlives the list (SourceRange holds its data by value)
            out.append(ci.SourceRange.from_locations(r.start, r.end))
        return out
    finally:
        dispose(found)


def record_names(tu: ci.TranslationUnit, usr: str, name: str
                 ) -> tuple[set[str], set[str]]:
    """The record's tags (the name the user gave, and the tag behind a typedef) and the
    file-scope typedef names of it in `tu`."""
    tags, typedefs = {name}, set()
    for c in children(tu.cursor):
        if kind_of(c) == CK.TYPEDEF_DECL:
            decl = c.underlying_typedef_type.get_canonical().get_declaration()
            if decl is not None and decl.get_usr() == usr:
                typedefs.add(c.spelling)
                if decl.spelling and not decl.is_anonymous():
                    tags.add(decl.spelling)
    return tags, typedefs


def positional_lists(tu: ci.TranslationUnit, names: tuple[set[str], set[str]]
                     ) -> list[Location]:
    """Where skipped code declares an object of the record (`struct TAG` or a typedef
    name, then a declarator) with a list that has a positional first element (the
    location of its `{`)."""
    tags, typedefs = names
    out: list[Location] = []
    for rng in skipped_ranges(tu):
        toks = [(t.kind, t.spelling, t.location) for t in tu.get_tokens(extent=rng)]
        i = 0
        while i < len(toks):
            kind, text, _ = toks[i]
            i += 1
            if kind != ci.TokenKind.IDENTIFIER or i >= len(toks):
                continue
            tagged = text in tags and i >= 2 and toks[i - 2][1] in ("struct", "union", "class")
            if not (tagged or text in typedefs):
                continue
            if toks[i][0] != ci.TokenKind.IDENTIFIER and toks[i][1] not in (
                    "*", "const", "volatile", "("):
                continue                # not a declaration of an object of the record
            j = i
            while j < len(toks) and toks[j][1] not in (";", "=", "{", "(", ")"):
                j += 1
            if j + 1 >= len(toks) or toks[j][1] != "=" or toks[j + 1][1] != "{":
                continue
            k = j + 1
            while k < len(toks) and toks[k][1] == "{":
                k += 1                  # an array of the record: its first element's list
            if k >= len(toks):
                continue
            first = toks[k][1]
            zero = first == "0" and k + 1 < len(toks) and toks[k + 1][1] == "}"
            if first in (".", "}", "[") or zero:
                continue
            loc = toks[j + 1][2]
            out.append(Location(loc.file.name, loc.line, loc.column))
            i = k
    return out
