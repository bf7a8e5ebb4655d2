"""The member list of one record definition as movable units of source text (libclang).

Reads a record's body into items, in source order: field units (one declaration, possibly of
several declarators; one macro expansion; one anonymous struct/union member), access
specifiers and other members (methods, types, static data, preprocessor lines), each with the
byte span of its text including the comments attached to it (comments directly before it,
and comments after it on its last line) and the access level in effect. Spans come from
cursor extents and tokens, never from pattern matching on text.

It reads only: it never chooses an order, edits text or decides whether reordering is safe;
what it cannot represent (a field declared in another file, a macro that changes access) it
lists in `RecordBody.problems` for the caller to refuse.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Literal

import clang.cindex as ci

from cachefit.errors import Location, UserError
from cachefit.frontend.clang_util import is_anonymous_member, is_anonymous_name, kind_of
from cachefit.frontend.source_text import (
    Span,
    Tok,
    line_end,
    line_start,
    only_blanks_after,
    only_blanks_before,
    tokens_of,
)

CK = ci.CursorKind
Access = Literal["public", "protected", "private"]
UnitKind = Literal["decl", "macro", "anonymous"]

_RECORD_DECLS = {CK.STRUCT_DECL, CK.UNION_DECL, CK.CLASS_DECL}
# Tokens that may open a declarator (before its name) or qualify a pointer inside it.
_DECLARATOR_OPENERS = {"*", "&", "&&", "(", "^"}
_POINTER_QUALS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "_Nonnull",
                  "_Nullable", "__unaligned"}


@dataclass(frozen=True)
class Declarator:
    """One declarator of a declaration that declares several fields (`*b` in `int a, *b;`)."""

    field: str
    span: Span


@dataclass(frozen=True)
class FieldUnit:
    """Fields whose declarations move together as one piece of text.

    `fields` are model field names in declaration order (for an anonymous struct/union: its
    named fields, flattened as the model does). `decl` is the declaration from its first
    token to its `;`; `core` adds the attached comments. For a declaration of several
    declarators that can be split, `specifier` is its decl-specifier text and `declarators`
    its parts; `splittable` says whether parts may be separated.
    """

    fields: tuple[str, ...]
    access: Access
    kind: UnitKind
    decl: Span
    core: Span
    location: Location
    specifier: Span | None = None
    declarators: tuple[Declarator, ...] = ()
    splittable: bool = False
    macro: str | None = None

    @property
    def is_padding(self) -> bool:
        """An unnamed bit-field: padding without a name."""
        return not self.fields


@dataclass(frozen=True)
class AccessSpec:
    """An access specifier (`private:`) in the member list."""

    access: Access
    decl: Span
    core: Span


@dataclass(frozen=True)
class OtherMember:
    """A member that never moves: method, type, static data, friend, preprocessor line."""

    what: str
    access: Access | None
    decl: Span
    core: Span


Item = FieldUnit | AccessSpec | OtherMember


# Directives that change what the members after them mean: members cannot move across them.
MACRO_DIRECTIVES = ("define", "undef")


@dataclass(frozen=True)
class Directive:
    """A preprocessor line inside the member list (`ifdef`, `include`, `pragma`, ...);
    `argument` is its first token after the name (the macro of a `#define`/`#undef`)."""

    name: str
    span: Span
    location: Location
    argument: str = ""


# Doxygen member-group markers (`//@{`, `/** @} */`, `//! \{`): comments holding one open
# or close a group and stay where they are.
GROUP_MARKERS = ("@{", "@}", "\\{", "\\}")


@dataclass(frozen=True)
class Heading:
    """Comment lines between two members that belong to neither: set off from the member
    after them by a blank line (a section heading, a Doxygen group marker). `span` runs
    from the start of the first comment's line to the end of the last comment's line;
    `next_item` is the index in `RecordBody.items` of the member after them; `marker`
    says whether one of them opens or closes a Doxygen member group."""

    span: Span
    next_item: int
    marker: bool


@dataclass
class RecordBody:
    """A record definition's member list, as the file `file` spells it."""

    file: str
    text: bytes
    kind: str                       # "struct", "class" or "union"
    default_access: Access
    body: Span                      # from just after `{` to the `}`
    items: list[Item]
    directives: list[Directive] = field(default_factory=list)
    problems: list[tuple[str, Location]] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)

    @property
    def units(self) -> list[FieldUnit]:
        return [i for i in self.items if isinstance(i, FieldUnit)]

    def field_names(self) -> list[str]:
        """Every named field in declaration order (as `cachefit.model.Record.fields`)."""
        return [name for u in self.units for name in u.fields]

    def fields_across(self, d: Directive) -> tuple[list[str], list[str]]:
        """The named fields declared before and after the directive `d` (none when it is
        inside a unit, e.g. an anonymous struct member, which moves with it)."""
        if any(u.decl.begin < d.span.begin < u.decl.end for u in self.units):
            return [], []
        before = [n for u in self.units if u.decl.begin < d.span.begin for n in u.fields]
        after = [n for u in self.units if u.decl.begin > d.span.begin for n in u.fields]
        return before, after

    def unit_of(self, name: str) -> FieldUnit:
        for u in self.units:
            if name in u.fields:
                return u
        raise KeyError(name)


def _access(cursor: ci.Cursor, default: Access) -> Access:
    spec = cursor.access_specifier
    if spec == ci.AccessSpecifier.PUBLIC:
        return "public"
    if spec == ci.AccessSpecifier.PROTECTED:
        return "protected"
    if spec == ci.AccessSpecifier.PRIVATE:
        return "private"
    return default


def named_fields(record_type: ci.Type) -> list[str]:
    """Named fields of a record type, members of anonymous members flattened (as the model)."""
    out: list[str] = []
    for fc in record_type.get_fields():
        decl = fc.type.get_canonical().get_declaration()
        if is_anonymous_name(fc.spelling) and kind_of(decl) in _RECORD_DECLS:
            out += named_fields(fc.type.get_canonical())
        elif fc.spelling and not is_anonymous_name(fc.spelling):
            out.append(fc.spelling)
    return out


class _Lines:
    """Line numbers of byte offsets of one text."""

    def __init__(self, text: bytes) -> None:
        self._nl = [i for i, b in enumerate(text) if b == 0x0A]

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self._nl, pos) + 1


@dataclass
class _Group:
    begin: int
    cursors: list[ci.Cursor]
    macro: tuple[Span, str] | None = None


def _loc(file: str, cursor_or_pos: ci.Cursor | int, lines: _Lines, text: bytes) -> Location:
    if isinstance(cursor_or_pos, int):
        pos = cursor_or_pos
        line = lines.line(pos)
        return Location(file, line, pos - (text.rfind(b"\n", 0, pos) + 1) + 1)
    loc = cursor_or_pos.location
    return Location(file, loc.line, loc.column)


def _first_tok_at(toks: list[Tok], pos: int) -> int:
    """Index of the first token that begins at or after `pos`."""
    return bisect.bisect_left([t.begin for t in toks], pos)


def _scan_to(toks: list[Tok], i: int, stop: int, wanted: str) -> int | None:
    """Index of the first `wanted` (`;` or `,`) at bracket depth 0 from token `i` (before
    `stop`); None when there is none, or when a `,` is wanted and a `;` ends the declaration
    first."""
    depth = 0
    while i < stop:
        s = toks[i].spelling if toks[i].kind == "PUNCTUATION" else ""
        if s in ("(", "[", "{"):
            depth += 1
        elif s in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and s in (wanted, ";"):
            return i if s == wanted else None
        i += 1
    return None


def _prev_code(toks: list[Tok], i: int) -> int:
    """Index of the last non-comment token before index `i`."""
    i -= 1
    while i >= 0 and toks[i].kind == "COMMENT":
        i -= 1
    return i


def _declarator_start(toks: list[Tok], name_i: int, spec_i: int) -> int:
    """Index of the token that opens the declarator whose name is token `name_i`."""
    j = name_i
    while j - 1 > spec_i and (toks[j - 1].spelling in _DECLARATOR_OPENERS or
                              toks[j - 1].spelling in _POINTER_QUALS):
        j -= 1
    # Qualifiers before the first pointer operator belong to the decl-specifiers.
    while j < name_i and toks[j].spelling in _POINTER_QUALS:
        j += 1
    return j


def _directives(toks: list[Tok], text: bytes, lo: int, hi: int, file: str,
                lines: _Lines) -> list[Directive]:
    out: list[Directive] = []
    i = lo
    while i < hi:
        t = toks[i]
        if t.kind == "PUNCTUATION" and t.spelling == "#" and only_blanks_before(text, t.begin):
            end = line_end(text, t.begin)
            while text[end - 1:end] == b"\\" or text[end - 2:end] == b"\\\r":
                end = line_end(text, end + 1)
            name = toks[i + 1].spelling if i + 1 < hi else ""
            arg = next((a.spelling for a in toks[i + 2:hi] if a.begin < end
                        and a.kind != "COMMENT"), "")
            out.append(Directive(name, Span(t.begin, end), _loc(file, t.begin, lines, text),
                                 arg))
            while i < hi and toks[i].begin < end:
                i += 1
            continue
        i += 1
    return out


def read_body(tu: ci.TranslationUnit, decl: ci.Cursor, text: bytes) -> RecordBody:
    """The member list of the record defined at `decl`, whose file's bytes are `text`."""
    file = decl.extent.start.file.name
    kind = {CK.CLASS_DECL: "class", CK.UNION_DECL: "union"}.get(kind_of(decl), "struct")
    default: Access = "private" if kind == "class" else "public"
    lines = _Lines(text)
    toks = tokens_of(decl)
    opens = [i for i, t in enumerate(toks) if t.kind == "PUNCTUATION" and t.spelling == "{"]
    closes = [i for i, t in enumerate(toks) if t.kind == "PUNCTUATION" and t.spelling == "}"]
    if not opens or not closes:
        raise UserError(f"the definition of {decl.spelling or 'the record'} has no member list "
                        "in the source", "is it generated by a macro? use the build-time mode",
                        _loc(file, decl, lines, text))
    open_i, close_i = opens[0], closes[-1]
    body = Span(toks[open_i].end, toks[close_i].begin)
    rb = RecordBody(file, text, kind, default, body, [])
    rb.directives = _directives(toks, text, open_i + 1, close_i, file, lines)

    macros: list[tuple[Span, str]] = []
    for c in tu.cursor.get_children():
        if kind_of(c) == CK.MACRO_INSTANTIATION and c.extent.start.file is not None \
                and c.extent.start.file.name == file:
            sp = Span(c.extent.start.offset, c.extent.end.offset)
            if body.begin <= sp.begin < body.end:
                macros.append((sp, c.spelling))

    def macro_at(pos: int) -> tuple[Span, str] | None:
        for sp, name in macros:
            if sp.begin <= pos < sp.end or pos == sp.begin:
                return sp, name
        return None

    groups: dict[tuple[str, int], _Group] = {}
    specs: list[AccessSpec] = []
    for ch in decl.get_children():
        k = kind_of(ch)
        ext = ch.extent
        if ext.start.file is None or ext.start.file.name != file:
            if k == CK.FIELD_DECL:
                where = ext.start.file.name if ext.start.file else "a macro"
                rb.problems.append((f"field '{ch.spelling}' is declared in {where}, "
                                    "included into the member list",
                                    _loc(file, toks[open_i].begin, lines, text)))
            continue
        s = ext.start.offset
        if not body.begin <= s <= body.end:
            continue  # attributes of the record itself
        # A field belongs to a macro expansion when its name comes from it too (a type
        # macro such as `u32 x;` only starts the declaration).
        m = macro_at(s)
        if m is not None and ch.location.file is not None and \
                not m[0].begin <= ch.location.offset < max(m[0].end, m[0].begin + 1):
            m = None
        if k == CK.CXX_ACCESS_SPEC_DECL and m is None:
            sp = Span(s, ext.end.offset)
            specs.append(AccessSpec(_access(ch, default), sp, sp))
            continue
        key = ("m", m[0].begin) if m else ("d", s)
        g = groups.setdefault(key, _Group(m[0].begin if m else s, [], m))
        g.cursors.append(ch)

    _merge_type_macros(groups)
    items: list[Item] = list(specs)
    for g in groups.values():
        items.append(_make_item(g, toks, open_i, close_i, rb, lines, default))
    for d in rb.directives:
        items.append(OtherMember("directive #" + d.name, None, d.span, d.span))
    items.sort(key=lambda it: it.decl.begin)
    rb.items = _attach_comments(items, toks, open_i, close_i, text, lines, rb.directives)
    rb.headings = _headings(rb.items, toks[open_i + 1:close_i], toks[open_i].end, text)
    return rb


def _merge_type_macros(groups: dict[tuple[str, int], _Group]) -> None:
    """Give a macro expansion that only writes a field's type to that field's declaration.

    `TAILQ_ENTRY(conn) next;` expands to `struct { ... } next;`: the unnamed struct comes
    from the macro, the field name does not, so the struct and the field were two items
    with the same start, and the comment above went with the struct (a type, which stays)
    instead of the field (libevent's evhttp_connection). The struct now belongs to the
    field's declaration, as in `struct { ... } next;` written out."""
    for key, g in list(groups.items()):
        if key[0] != "m" or any(kind_of(c) == CK.FIELD_DECL for c in g.cursors) or \
                not all(kind_of(c) in _RECORD_DECLS for c in g.cursors):
            continue
        field = groups.get(("d", g.begin))
        if field is not None and any(kind_of(c) == CK.FIELD_DECL for c in field.cursors):
            field.cursors[:0] = g.cursors
            del groups[key]


def _headings(items: list[Item], toks: list[Tok], start: int, text: bytes) -> list[Heading]:
    """The comments between two items (or between `{` and the first item) that belong to
    neither, one Heading per gap that has any. Comments on the line the gap starts on
    (after `{`, or after an item's code) are not headings; `toks` are the member list's
    tokens and `start` the offset right after `{`."""
    comments = [t for t in toks if t.kind == "COMMENT"]
    begins = [t.begin for t in comments]
    out: list[Heading] = []
    prev_end = start
    for k, it in enumerate(items):
        lo = bisect.bisect_left(begins, prev_end)
        hi = bisect.bisect_left(begins, it.core.begin)
        free = [t for t in comments[lo:hi]
                if t.end <= it.core.begin and b"\n" in text[prev_end:t.begin]]
        if free:
            span = Span(line_start(text, free[0].begin), line_end(text, free[-1].end))
            marker = any(m in t.spelling for t in free for m in GROUP_MARKERS)
            out.append(Heading(span, k, marker))
        prev_end = max(prev_end, it.core.end)
    return out


def _make_item(g: _Group, toks: list[Tok], open_i: int, close_i: int, rb: RecordBody,
               lines: _Lines, default: Access) -> Item:
    file, text = rb.file, rb.text
    fields = [c for c in g.cursors if kind_of(c) == CK.FIELD_DECL]
    records = [c for c in g.cursors if kind_of(c) in _RECORD_DECLS]
    last_end = max(c.extent.end.offset for c in g.cursors)
    if g.macro is not None:
        last_end = max(last_end, g.macro[0].end)
    j = _first_tok_at(toks, last_end)
    if g.macro is not None or not (fields or records):
        # A macro expansion or another member: take a `;` that directly follows.
        nxt = j
        while nxt < close_i and toks[nxt].kind == "COMMENT":
            nxt += 1
        end = toks[nxt].end if nxt < close_i and toks[nxt].spelling == ";" else last_end
    else:
        semi = _scan_to(toks, j, close_i, ";")
        end = toks[semi].end if semi is not None else last_end
    decl = Span(g.begin, end)
    first = g.cursors[0]
    loc = _loc(file, g.begin, lines, text)
    if any(kind_of(c) == CK.CXX_ACCESS_SPEC_DECL for c in g.cursors):
        rb.problems.append((f"macro '{g.macro[1] if g.macro else ''}' changes the access level "
                            "inside the member list", loc))

    if fields:
        names = tuple(c.spelling for c in fields if not is_anonymous_name(c.spelling))
        # An unnamed field of record type is an anonymous struct/union member.
        for c in fields:
            if is_anonymous_name(c.spelling) and not c.is_bitfield():
                names += tuple(named_fields(c.type.get_canonical()))
        access = _access(fields[0], default)
        if g.macro is not None:
            return FieldUnit(names, access, "macro", decl, decl, loc, macro=g.macro[1])
        if len(fields) == 1:
            return FieldUnit(names, access, "decl", decl, decl, loc)
        return _multi_declarator(fields, records, names, access, decl, loc, toks, close_i)
    if records and _is_anonymous_member(records[0], fields):
        names = tuple(named_fields(records[0].type.get_canonical()))
        access = _access(records[0], default)
        kind: UnitKind = "macro" if g.macro is not None else "anonymous"
        return FieldUnit(names, access, kind, decl, decl, loc,
                         macro=g.macro[1] if g.macro else None)
    k = kind_of(first)
    what = k.name.lower() if k is not None else "member"
    access_of: Access | None = _access(first, default)
    return OtherMember(what, access_of, decl, decl)


def _is_anonymous_member(record: ci.Cursor, fields: list[ci.Cursor]) -> bool:
    """An unnamed struct/union declared in the member list without a declarator."""
    return not fields and is_anonymous_member(record)


def _multi_declarator(fields: list[ci.Cursor], records: list[ci.Cursor],
                      names: tuple[str, ...], access: Access, decl: Span, loc: Location,
                      toks: list[Tok], close_i: int) -> FieldUnit:
    """A declaration of several fields: find its decl-specifier and each declarator."""
    ordered = sorted(fields, key=lambda c: c.extent.end.offset)
    unnamed = any(not c.spelling for c in ordered)
    spec_i = _first_tok_at(toks, decl.begin)
    name_offsets = {t.begin: i for i, t in enumerate(toks)}
    first_name_i = name_offsets.get(ordered[0].location.offset)
    if unnamed or first_name_i is None:
        return FieldUnit(names, access, "decl", decl, decl, loc)
    d0 = _declarator_start(toks, first_name_i, spec_i)
    commas: list[int] = []
    for c in ordered[:-1]:
        ci_ = _scan_to(toks, _first_tok_at(toks, c.extent.end.offset), close_i, ",")
        if ci_ is None:
            return FieldUnit(names, access, "decl", decl, decl, loc)
        commas.append(ci_)
    semi = _scan_to(toks, _first_tok_at(toks, ordered[-1].extent.end.offset), close_i,
                    ";")
    if semi is None:
        return FieldUnit(names, access, "decl", decl, decl, loc)
    parts: list[Declarator] = []
    starts = [d0] + [c + 1 for c in commas]
    ends = commas + [semi]
    for c, b, e in zip(ordered, starts, ends, strict=True):
        last = _prev_code(toks, e)
        parts.append(Declarator(c.spelling, Span(toks[b].begin, toks[last].end)))
    spec_last = _prev_code(toks, d0)
    specifier = Span(toks[spec_i].begin, toks[spec_last].end)
    defines_type = bool(records) or any(
        t.spelling == "{" for t in toks[spec_i:d0] if t.kind == "PUNCTUATION")
    return FieldUnit(tuple(c.spelling for c in ordered), access, "decl", decl, decl, loc,
                     specifier=specifier, declarators=tuple(parts),
                     splittable=not defines_type)


def _attach_comments(items: list[Item], toks: list[Tok], open_i: int, close_i: int,
                     text: bytes, lines: _Lines, directives: list[Directive]) -> list[Item]:
    """Extend each item's `core` over the comments directly before it and after it on its line.

    A comment belongs to the item before it when it sits on that item's last line and no
    code follows it on that line, or when it continues such a comment: alone on the next
    line, at the same column (zlib's `x;  /* "x" for exposed */` followed by lines of
    `/* x.have: ... */` under it), or when a block of comment lines starts on the line
    right after a field and a blank line (or the end of the member list) follows the
    block (zlib's deflate.h documents members below them; under an access specifier or a
    method such a block is a section heading); otherwise to the next item
    when no blank line separates them (directly or through comments that do belong to
    it). Comments on the line of `{`, comments after a blank line before the next item
    (section headings, Doxygen `@name ... @{` group markers) and other comments after the
    last item stay where they are.
    """
    def inside_item_or_directive(t: Tok) -> bool:
        return any(it.decl.begin <= t.begin < it.decl.end for it in items)

    def column(pos: int) -> int:
        start = line_start(text, pos)
        return len(text[start:pos].decode(errors="replace").expandtabs(8))

    lead: dict[int, int] = {}
    above: dict[int, list[Tok]] = {}
    trail: dict[int, int] = {}
    trail_col: dict[int, int] = {}
    def below_block_end(i: int, prev: int) -> int | None:
        """The end of the comment block from toks[i] when it documents item `prev` from
        below: from the line after the item, each comment alone on the line after the
        last, then a blank line or the end of the member list."""
        anchor = max(items[prev].decl.end, trail.get(prev, 0))
        if lines.line(toks[i].begin) != lines.line(anchor) + 1:
            return None
        end = toks[i].end
        j = i + 1
        while j < close_i and toks[j].kind == "COMMENT" and \
                lines.line(toks[j].begin) == lines.line(end) + 1 and \
                only_blanks_before(text, toks[j].begin) and only_blanks_after(text, toks[j].end):
            end = toks[j].end
            j += 1
        if j == close_i or not only_blanks_after(text, end):
            return end if j == close_i else None
        after = line_end(text, end) + 1
        blank = text[after:line_end(text, after)].strip(b" \t\r") == b""
        return end if blank else None

    for i in range(open_i + 1, close_i):
        t = toks[i]
        if t.kind != "COMMENT" or inside_item_or_directive(t):
            continue
        prev = max((k for k, it in enumerate(items) if it.decl.end <= t.begin), default=None)
        if prev is not None and t.end <= trail.get(prev, 0):
            continue                    # inside a block already given to `prev`
        nxt = min((k for k, it in enumerate(items) if it.decl.begin >= t.end), default=None)
        prev_end = items[prev].decl.end if prev is not None else toks[open_i].end
        same_line = lines.line(prev_end) == lines.line(t.begin)
        code_follows = nxt is not None and lines.line(items[nxt].decl.begin) == \
            lines.line(t.end)
        if same_line and not code_follows:
            if prev is not None:
                trail[prev] = max(trail.get(prev, 0), t.end)
                trail_col.setdefault(prev, column(t.begin))
            continue
        if prev is not None and prev in trail and not code_follows and \
                lines.line(t.begin) == lines.line(trail[prev]) + 1 and \
                only_blanks_before(text, t.begin) and column(t.begin) == trail_col[prev]:
            trail[prev] = t.end
            continue
        if prev is not None and isinstance(items[prev], FieldUnit) and not code_follows and \
                only_blanks_before(text, t.begin) and only_blanks_after(text, t.end):
            end = below_block_end(i, prev)
            if end is not None:
                trail[prev] = end
                continue
        if nxt is not None:
            above.setdefault(nxt, []).append(t)
    for k, comments in above.items():
        # directly above only: a blank line ends the chain (a section heading or a
        # Doxygen `@name ... @{` marker stays where it is)
        start = items[k].decl.begin
        for t in reversed(comments):
            if lines.line(start) - lines.line(t.end) > 1:
                break
            start = t.begin
        if start != items[k].decl.begin:
            lead[k] = start
    out: list[Item] = []
    for k, it in enumerate(items):
        core = Span(lead.get(k, it.decl.begin), max(trail.get(k, 0), it.decl.end))
        if core != it.core:
            it = _with_core(it, core)
        out.append(it)
    return out


def _with_core(it: Item, core: Span) -> Item:
    if isinstance(it, FieldUnit):
        return FieldUnit(it.fields, it.access, it.kind, it.decl, core, it.location,
                         it.specifier, it.declarators, it.splittable, it.macro)
    if isinstance(it, AccessSpec):
        return AccessSpec(it.access, it.decl, core)
    return OtherMember(it.what, it.access, it.decl, core)
