"""Rewrite a record's member list so that its fields are declared in a given order.

Input is a `RecordBody` (member_units) and the wanted field order; output is the new text of
the member list. Every field unit moves as source text with its comments and attributes; a
declaration of several declarators (`int a, b;`) is split where its fields must separate;
each field keeps its access level (access specifiers are emitted where needed, and ones that
govern no member any more are dropped); fields of one macro expansion or one anonymous
struct/union move as one unit. The fields are gathered into one block at the position of the
first field (or of the last, when a type or constant declared between fields could be used
by them), indented like the fields around it. Members the layout asks for are declared
right before their field: zero-width bit-field barriers and padding members (issue 30,
cachefit.rewrite.padding). A `#define`/`#undef` between fields splits the
list: the fields on each side are gathered on their side, and none moves across it.

It only produces text: it does not decide the order or how it cuts the member list
(cachefit.reorder.member_pieces), check that the order is safe, read or write files, or
verify the compiler's layout (see layout_check).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from cachefit.errors import UserError
from cachefit.frontend.member_units import (
    MACRO_DIRECTIVES,
    Access,
    AccessSpec,
    Declarator,
    FieldUnit,
    Heading,
    Item,
    OtherMember,
    RecordBody,
)
from cachefit.frontend.source_text import (
    Span,
    blank_line_before,
    indentation,
    line_end,
    line_start,
    only_blanks_after,
    only_blanks_before,
    skip_blanks,
)
from cachefit.reorder.member_pieces import (
    Piece,
    declared_order,
    plan_pieces,
    split_declarations,
)
from cachefit.rewrite.padding import check_padding, pad_declaration
from cachefit.rewrite.removed_text import (
    blank_but,
    blank_line_follows,
    blank_or_end_at,
    drop_hanging_blanks,
    join_blank_gaps,
    line_after,
    merged,
    needs_blank_before,
    outside,
)

# Members declared between fields that fields may refer to (types, constants, templates).
_NAMING_MEMBERS = {"typedef_decl", "type_alias_decl", "type_alias_template_decl", "enum_decl",
                   "struct_decl", "class_decl", "union_decl", "var_decl", "using_declaration",
                   "class_template", "namespace_alias", "using_directive"}


@dataclass(frozen=True)
class MemberRewrite:
    """The new member list: `replacement` replaces the bytes of `span` (the body).

    `edits` are the same change as small (begin, end, text) pieces in file offsets:
    removed declarations and the inserted block, so that other edits inside kept members
    (e.g. a constructor's initialiser list) do not overlap it.
    """

    span: Span
    replacement: bytes
    effective_order: tuple[str, ...]   # field names as the new text declares them
    split: tuple[str, ...]             # first field of each declaration that was split
    changed: bool
    edits: tuple[tuple[int, int, bytes], ...] = ()

    def apply(self, text: bytes) -> bytes:
        return text[:self.span.begin] + self.replacement + text[self.span.end:]


def _unchanged(body: RecordBody, pieces: list[Piece]) -> bool:
    return [p.unit for p in pieces] == body.units and all(p.whole for p in pieces)


def _piece_text(text: bytes, p: Piece, attrs: dict[str, str]) -> bytes:
    u = p.unit
    wanted = [n for n in p.fields if n in attrs]
    if p.whole and not wanted:
        return text[u.core.begin:u.core.end]
    if wanted and (u.kind != "decl" or (len(u.fields) > 1 and not u.splittable)):
        by = f"macro {u.macro}" if u.macro else "one declaration"
        raise UserError(f"cannot change the alignment of {wanted[0]}: it is declared "
                        f"together with other members by {by}", "run without --relax-align",
                        u.location)
    if len(u.fields) == 1:
        semi = u.decl.end - 1
        return (text[u.core.begin:semi] + (" " + attrs[u.fields[0]]).encode() +
                text[semi:u.core.end])
    assert u.specifier is not None
    decls = [d for d in u.declarators if d.field in p.fields]

    def decl_text(d: Declarator) -> bytes:
        extra = (" " + attrs[d.field]).encode() if d.field in attrs else b""
        return d.span.text(text) + extra

    out = u.specifier.text(text) + b" " + decl_text(decls[0])
    for a, b in zip(decls, decls[1:], strict=False):
        out += text[a.span.end:b.span.begin] + decl_text(b)
    out += b";"
    if decls[0] is u.declarators[0]:
        out = text[u.core.begin:u.decl.begin] + out
    if decls[-1] is u.declarators[-1]:
        out += text[u.decl.end:u.core.end]
    return out


def _spec(access: Access) -> bytes:
    return access.encode() + b":"


def _useless_specs(items: list[Item]) -> set[int]:
    """Access specifiers followed only by field units up to the next specifier or the end."""
    out: set[int] = set()
    for k, it in enumerate(items):
        if not isinstance(it, AccessSpec):
            continue
        j = k + 1
        while j < len(items) and isinstance(items[j], FieldUnit):
            j += 1
        if j == len(items) or isinstance(items[j], AccessSpec):
            out.add(k)
    return out


def rewrite_members(body: RecordBody, order: list[str],
                    attributes: dict[str, str] | None = None,
                    barriers: dict[str, str] | None = None,
                    padding: dict[str, int] | None = None) -> MemberRewrite:
    """The member list of `body` with its fields declared in `order`.

    `attributes` maps fields to attribute text to add to their declarator (e.g. a relaxed
    alignment: `__attribute__((packed, aligned(4)))`). `barriers` maps fields to the type of
    an unnamed zero-width bit-field (`unsigned int : 0;`) to declare right before them (the
    layout optimizer asks for one where the compiler would otherwise pack a bit-field into
    free bits before it). `padding` maps fields to the bytes of a padding member
    (cachefit.rewrite.padding) to declare right before them, before the barrier and the
    unnamed bit-fields kept in front of the field, with the access in effect after the member
    before it (no access specifier is added for it); a declaration of several fields is split
    before a padded one.
    """
    text = body.text
    attrs = dict(attributes or {})
    walls = dict(barriers or {})
    pads = dict(padding or {})
    check_padding(pads, order, body.units[0].location if body.units else None)
    pieces = _split_at_pads(plan_pieces(body, order), pads)
    effective = declared_order(pieces)
    if _unchanged(body, pieces) and not attrs and not walls and not pads:
        return MemberRewrite(body.body, body.body.text(text), effective, (), False)
    split = split_declarations(body, pieces)
    items = body.items
    removed = {k for k, it in enumerate(items) if isinstance(it, FieldUnit)}
    removed |= _useless_specs(items)
    inline = text.count(b"\n", body.body.begin, body.body.end) == 0
    edits: list[tuple[int, int, bytes]] = []
    for (lo, hi), part in zip(*_segments(body, pieces), strict=True):
        if part:
            edits += _segment_edits(body, lo, hi, removed, part, inline, attrs,
                                    _Extras(walls, pads))
    edits.sort(key=lambda e: (e[0], e[1]))
    out = bytearray()
    cur = body.body.begin
    for b, e, rep in edits:
        if b < cur:
            raise AssertionError("overlapping member edits")  # pragma: no cover
        out += text[cur:b] + rep
        cur = e
    out += text[cur:body.body.end]
    return MemberRewrite(body.body, bytes(out), effective, split, True, tuple(edits))


def _segments(body: RecordBody, pieces: list[Piece]) -> tuple[list[tuple[int, int]],
                                                              list[list[Piece]]]:
    """The member list split at each `#define`/`#undef` between fields (index ranges of
    `body.items`; the directive opens its range) and the pieces each range emits. A macro
    defined there may be used by the members after it, so no piece moves across it; an
    order that would is a UserError (the analysis' constraint keeps the optimizer's)."""
    items = body.items
    cuts = [k for k, it in enumerate(items) for d in body.directives
            if isinstance(it, OtherMember) and it.decl == d.span and
            d.name in MACRO_DIRECTIVES and all(body.fields_across(d))]
    bounds = [0, *cuts, len(items)]
    ranges = list(zip(bounds, bounds[1:], strict=False))
    index = {id(it): k for k, it in enumerate(items)}
    parts: list[list[Piece]] = [[] for _ in ranges]
    seg = 0
    for p in pieces:
        mine = bisect.bisect_right(cuts, index[id(p.unit)])
        if mine < seg:
            d = next(d for d in body.directives if d.span == items[cuts[mine]].decl)
            who = p.fields[0] if p.fields else "an unnamed bit-field"
            raise UserError(f"the new order moves {who} across #{d.name} {d.argument} at "
                            f"{d.location} in the member list; members cannot move across it",
                            "keep the members on their side of the directive, or move the "
                            "directive out of the member list", p.unit.location)
        seg = mine
        parts[mine].append(p)
    return ranges, parts


def _segment_edits(body: RecordBody, lo: int, hi: int, removed: set[int],
                   pieces: list[Piece], inline: bool, attrs: dict[str, str],
                   extras: _Extras) -> list[tuple[int, int, bytes]]:
    """Remove the field units (and useless access specifiers) of `body.items[lo:hi]` and
    the section headings among them, and insert `pieces` as one block where the first (or
    the last) field of the range was."""
    text = body.text
    items = body.items
    unit_idx = [k for k in range(lo, hi) if isinstance(items[k], FieldUnit)]
    first_u, last_u = unit_idx[0], unit_idx[-1]
    anchor = first_u
    if any(isinstance(items[k], OtherMember) and items[k].what in _NAMING_MEMBERS
           for k in range(first_u, last_u)):
        anchor = last_u

    heads = [] if inline else _moving_headings(body, lo, hi)
    gone = [_removal(text, items[k], inline) for k in sorted(removed) if lo <= k < hi]
    gone += [Span(h.span.begin, line_start(text, items[h.next_item].core.begin))
             for h in heads]
    if not inline:
        gone = join_blank_gaps(text, gone)
    p = outside(gone, _insertion_point(body, items[anchor].core, inline))
    access, after = _access_around(body, hi, removed, p)

    # An explicit specifier right before the first field stays when the block starts with
    # its access (`class C { private: int a; ... }` keeps its `private:`).
    spec = items[anchor - 1] if anchor > 0 else None
    opening = spec.access if isinstance(spec, AccessSpec) and anchor - 1 in removed else None
    # A field list whose fields are all set off by blank lines stays so.
    spaced = len(unit_idx) > 1 and all(blank_line_before(text, items[k].core.begin)
                                       for k in unit_idx[1:])
    # Specifiers that go but carry comments: the block's specifiers of their access
    # take their text, so the comments stay (with a specifier of the same access).
    commented = tuple(it for k, it in enumerate(items) if lo <= k < hi and k in removed and
                      isinstance(it, AccessSpec) and it.core != it.decl)
    style = _Style(inline, spaced, opening, _sections(body, lo, hi, heads), commented)
    block = _block(body, pieces, access, after, attrs, extras, style)
    inserts, repeated = _placed(text, p, after, block, gone, inline)
    lead = _spec_before(body, p, removed, gone) if block.opens_with_spec else None
    if lead is not None:
        # the block's own first specifier overrides it: it would govern nothing
        repeated.append(_removal(text, lead, inline))
    return _edits(body, merged(gone + repeated), inserts, block)


def _spec_before(body: RecordBody, p: int, removed: set[int],
                 gone: list[Span]) -> AccessSpec | None:
    """The kept access specifier without comments right before `p`, with nothing but
    removed text (`gone`) and blanks between, if there is one."""
    before = [it for k, it in enumerate(body.items) if k not in removed and it.decl.end <= p]
    spec = before[-1] if before else None
    if isinstance(spec, AccessSpec) and spec.core == spec.decl and \
            blank_but(body.text, spec.core.end, p, gone):
        return spec
    return None


def _placed(text: bytes, p: int, after: Item | None, block: _Block, gone: list[Span],
            inline: bool) -> tuple[list[tuple[int, bytes]], list[Span]]:
    """Where the block's text goes (offset, text), and the specifier to remove with it.

    All of it goes at `p`, unless the block ends with the access that the kept specifier
    `after`, with nothing but removed text (`gone`) between, gives. Then, when the block
    emits that specifier itself, what follows its last one goes right after the kept
    specifier (which keeps its place and the blank line before it); otherwise the kept one
    would only repeat it (`private:` twice) and goes, unless it has comments.
    """
    whole = [(p, block.text)]
    if not (isinstance(after, AccessSpec) and after.access == block.access and
            blank_but(text, p, after.decl.begin, gone)):
        return whole, []
    resume = line_after(text, after.core)
    if block.split is None or block.resume is None or resume is None:
        return whole, [_removal(text, after, inline)] if after.core == after.decl else []
    return [(p, block.text[:block.split]), (resume, block.text[block.resume:])], []


def _insertion_point(body: RecordBody, anchor: Span, inline: bool) -> int:
    """Where the block goes: the start of the anchor field's line (its own offset in a
    one-line record), or the next line when the anchor shares its line with others."""
    text = body.text
    if inline:
        p = anchor.begin
    elif only_blanks_before(text, anchor.begin):
        p = line_start(text, anchor.begin)
    else:
        p = min(line_end(text, anchor.end) + 1, line_start(text, body.body.end))
    return max(p, body.body.begin)


def _access_around(body: RecordBody, hi: int, removed: set[int],
                   p: int) -> tuple[Access, Item | None]:
    """The access in effect where the block goes (at `p`) and the first kept member after
    it that has an access (the end of the range `..hi` when the next range comes first)."""
    items = body.items
    kept = [it for k, it in enumerate(items) if k not in removed]
    access: Access = body.default_access
    for it in kept:
        if it.decl.begin < p and isinstance(it, AccessSpec):
            access = it.access
    after = next((it for it in kept if it.decl.begin >= p and
                  not (isinstance(it, OtherMember) and it.access is None)), None)
    if hi < len(items) and (after is None or after.decl.begin > items[hi].decl.begin):
        # The next range's block starts with the access in effect at its directive.
        end = items[hi].decl.begin
        there = next((it.access for it in reversed(kept)
                      if isinstance(it, AccessSpec) and it.decl.begin < end),
                     body.default_access)
        after = OtherMember("end of range", there, Span(end, end), Span(end, end))
    return access, after


def _edits(body: RecordBody, spans: list[Span], inserts: list[tuple[int, bytes]],
           block: _Block) -> list[tuple[int, int, bytes]]:
    """The removals `spans` and the insertions (offset, text) of `block` as edits; blank
    lines the removals would leave hanging go too; the last insertion drops its final
    blank line where the kept text after it starts with one or ends the member list, and
    the first gets the blank line a specifier opening it needs where the text before it
    has none."""
    text = body.text
    inserts = [(outside(spans, at), part) for at, part in inserts]
    spans = drop_hanging_blanks(text, body.body, spans, [at for at, part in inserts if part])
    at, part = inserts[-1]
    if block.tail and blank_or_end_at(text, at, spans, body.body.end):
        inserts[-1] = (at, part[:-block.tail])
    at, part = inserts[0]
    if block.head and part and needs_blank_before(text, at, spans, body.body):
        inserts[0] = (at, block.head + part)
    return [(r.begin, r.end, b"") for r in spans] + [(at, at, part) for at, part in inserts
                                                     if part]


def _moving_headings(body: RecordBody, lo: int, hi: int) -> list[Heading]:
    """The headings of `body.items[lo:hi]` that move with their section: those without a
    Doxygen group marker that stand right before a field unit starting its line."""
    items = body.items
    return [h for h in body.headings
            if lo <= h.next_item < hi and not h.marker and
            isinstance(items[h.next_item], FieldUnit) and items[h.next_item].fields and
            only_blanks_before(body.text, items[h.next_item].core.begin)]


def _sections(body: RecordBody, lo: int, hi: int, moving: list[Heading]) -> dict[int, Heading]:
    """The section heading of each field unit of `body.items[lo:hi]` (by `id`): the last
    heading before it, if that one moves (one that stays ends the section before it)."""
    at = {h.next_item: h for h in body.headings}
    movers = {id(h) for h in moving}
    out: dict[int, Heading] = {}
    cur: Heading | None = None
    for k in range(lo, hi):
        h = at.get(k)
        if h is not None:
            cur = h if id(h) in movers else None
        if cur is not None and isinstance(body.items[k], FieldUnit):
            out[id(body.items[k])] = cur
    return out


def _specs_spaced(body: RecordBody) -> bool:
    """Whether the access specifiers after the first member are all set off by a blank
    line (then those the block adds are too)."""
    specs = [it for it in body.items[1:] if isinstance(it, AccessSpec)]
    return bool(specs) and all(blank_line_before(body.text, it.core.begin) for it in specs)


def _removal(text: bytes, it: Item, inline: bool) -> Span:
    core = it.core
    if inline:
        return Span(core.begin, skip_blanks(text, core.end))
    before, after = only_blanks_before(text, core.begin), only_blanks_after(text, core.end)
    if before and after:
        return Span(line_start(text, core.begin), min(line_end(text, core.end) + 1, len(text)))
    if before:
        return Span(core.begin, skip_blanks(text, core.end))
    if after:
        b = core.begin
        while b > 0 and text[b - 1:b] in (b" ", b"\t"):
            b -= 1
        return Span(b, core.end)
    return Span(core.begin, skip_blanks(text, core.end))


def _field_indent(body: RecordBody) -> bytes:
    text = body.text
    for u in body.units:
        if only_blanks_before(text, u.core.begin):
            return indentation(text, u.core.begin)
    for it in body.items:
        if only_blanks_before(text, it.core.begin):
            return indentation(text, it.core.begin)
    return indentation(text, body.body.begin) + b"    "


def _spec_indent(body: RecordBody) -> bytes:
    text = body.text
    for it in body.items:
        if isinstance(it, AccessSpec) and only_blanks_before(text, it.core.begin):
            return indentation(text, it.core.begin)
    return indentation(text, body.body.begin)


@dataclass
class _Emitter:
    """Collects the block's lines: never two blank lines in a row, none at its start or
    right after an access specifier; remembers where the last specifier it emitted
    begins (with the blank line set before it) and where the lines after it begin."""

    nl: bytes
    inline: bool
    parts: list[bytes] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)   # "blank", "spec" or "text"
    last_spec: int | None = None                      # index in `parts`
    opens_spaced: bool = False                        # starts with a spaced specifier
    headings: set[int] = field(default_factory=set)   # ids of the headings emitted

    def blank(self) -> None:
        """A blank line, unless it would start the block, follow a specifier or another
        blank line."""
        if not self.inline and self.kinds and self.kinds[-1] == "text":
            self._add(self.nl, "blank")

    def spec(self, line: bytes, spaced: bool) -> None:
        """An access specifier line, set off by a blank line when `spaced`."""
        if spaced:
            self.blank()
        self.opens_spaced = self.opens_spaced or spaced and not self.parts
        blank = bool(self.kinds) and self.kinds[-1] == "blank"
        self.last_spec = len(self.parts) - blank
        self._add(line, "spec")

    def text(self, line: bytes) -> None:
        """Lines of members (or one member's text, in a one-line record)."""
        self._add(line, "text")

    def heading(self, heading: Heading, line: bytes) -> None:
        """A section heading's lines (`line`, without its line break)."""
        self.headings.add(id(heading))
        self._add(line + self.nl, "text")

    def has_heading(self, heading: Heading) -> bool:
        """Whether `heading` was emitted already."""
        return id(heading) in self.headings

    def _add(self, part: bytes, kind: str) -> None:
        self.parts.append(part)
        self.kinds.append(kind)

    def block(self, access: Access) -> _Block:
        """The text collected, with the access in effect at its end."""
        text = b" ".join(self.parts) + b" " if self.inline else b"".join(self.parts)
        tail = len(self.nl) if self.kinds and self.kinds[-1] == "blank" else 0
        head = self.nl if self.opens_spaced else b""
        opens = bool(self.kinds) and self.kinds[0] == "spec"
        if self.last_spec is None or self.inline:
            return _Block(text, access, tail=tail, head=head, opens_with_spec=opens)
        split = sum(len(x) for x in self.parts[:self.last_spec])
        spec_at = next(k for k in range(self.last_spec, len(self.parts))
                       if self.kinds[k] == "spec")
        resume = sum(len(x) for x in self.parts[:spec_at + 1])
        return _Block(text, access, split, resume, tail, head, opens)


@dataclass(frozen=True)
class _Block:
    """The block's text and the access in effect at its end; `split` is where its last
    access specifier begins (with the blank line before it) and `resume` where the lines
    after that specifier begin (None when the block emits no specifier); `tail` is the
    length of the blank line it ends with (0 when none); `head` is the blank line to set
    before it when it starts with a specifier in a class that sets them off so;
    `opens_with_spec` says whether it starts with a specifier."""

    text: bytes
    access: Access
    split: int | None = None
    resume: int | None = None
    tail: int = 0
    head: bytes = b""
    opens_with_spec: bool = False


@dataclass(frozen=True)
class _Extras:
    """Members the block declares that the record did not: zero-width bit-field barriers
    (type per field) and padding members (bytes per field), each right before its field."""

    walls: dict[str, str]
    pads: dict[str, int]


_PAD_NOTE = b"  /* cachefit: keeps the next field off other threads' lines */"


@dataclass(frozen=True)
class _Style:
    """How the block is laid out: on one line (`inline`), every field set off by a blank
    line (`spaced`), the explicit specifier kept before its first field (`opening`), and
    the section heading of each field unit (by `id`) to emit before its section's first
    field; `commented` are removed specifiers with comments, whose text the block's
    specifiers of their access take (the first piece of that access gets one)."""

    inline: bool
    spaced: bool = False
    opening: Access | None = None
    sections: dict[int, Heading] = field(default_factory=dict)
    commented: tuple[AccessSpec, ...] = ()


def _block(body: RecordBody, pieces: list[Piece], access: Access, after: Item | None,
           attrs: dict[str, str], extras: _Extras, style: _Style) -> _Block:
    """The text of `pieces` in order, with the access specifiers they need, the section
    headings that move, the barriers and padding members asked for, and the access in
    effect at its end."""
    text = body.text
    inline = style.inline
    field_indent, spec_indent = _field_indent(body), _spec_indent(body)
    nl = b"\r\n" if b"\r\n" in body.body.text(text) else b"\n"
    em = _Emitter(nl, inline)
    cur = access
    walls = extras.walls
    walled: set[str] = set()
    padded: set[str] = set()
    specs_spaced = not inline and _specs_spaced(body)
    section: Heading | None = None
    pending = list(style.commented)
    for n, p in enumerate(pieces):
        u = p.unit
        # The barrier and the padding go before the unit: before unnamed bit-fields kept
        # in front of it.
        head = p.before if p.before is not None else p.fields[0] if p.fields else ""
        pad_size = extras.pads.get(head) if head not in padded else None
        padded.add(head)
        if u.access != cur or (n == 0 and u.access == style.opening) or \
                any(s.access == u.access for s in pending):
            if pad_size is not None:    # in the access of the member before it
                pad = pad_declaration(head, pad_size, cur == "private")
                em.text(pad if inline else field_indent + pad + _PAD_NOTE + nl)
                pad_size = None
            em.spec(_spec_text(text, u.access, pending, spec_indent, nl, inline),
                    specs_spaced)
            cur = u.access
        piece = _piece_text(text, p, attrs)
        pad = None if pad_size is None else pad_declaration(head, pad_size, cur == "private")
        wall = None
        if head in walls and head not in walled:
            wall = (walls[head] + " : 0;").encode()
            walled.add(head)
        if inline:
            for extra in (pad, wall):
                if extra:
                    em.text(extra)
            em.text(piece)
            continue
        if p.fields:
            section = _section_start(em, text, style.sections.get(id(u)), section, n)
        barrier = field_indent + wall + b"  /* cachefit: new bit-field unit */" + nl \
            if wall else b""
        if pad:
            barrier = field_indent + pad + _PAD_NOTE + nl + barrier
        _emit_piece(em, body, p, barrier, piece, field_indent, style.spaced and n > 0)
    if after is not None and not isinstance(after, AccessSpec) and after.access is not None \
            and after.access != cur:
        em.text(_spec(after.access) if inline else spec_indent + _spec(after.access) + nl)
    return em.block(cur)


def _split_at_pads(pieces: list[Piece], pads: dict[str, int]) -> list[Piece]:
    """`pieces` with each run of declarators of one declaration cut before a padded field
    (the padding member goes between them); a padded field declared together with the
    fields before it by a macro, an anonymous struct/union or a declaration that defines a
    type is a UserError (nothing can go between them)."""
    out: list[Piece] = []
    for p in pieces:
        inner = [n for n in p.fields[1:] if n in pads]
        if not inner:
            out.append(p)
            continue
        u = p.unit
        if not u.splittable:
            by = f"macro {u.macro}" if u.macro else "one declaration"
            raise UserError(f"cannot insert padding before {inner[0]}: it is declared "
                            f"together with the members before it by {by}",
                            "pad before the first field of that declaration instead",
                            u.location)
        run: list[str] = []
        for n in p.fields:
            if n in pads and run:
                out.append(Piece(u, tuple(run)))
                run = []
            run.append(n)
        out.append(Piece(u, tuple(run)))
    return out


def _emit_piece(em: _Emitter, body: RecordBody, p: Piece, barrier: bytes, piece: bytes,
                field_indent: bytes, spaced: bool) -> None:
    """The lines of piece `p` (its text `piece`, after the `barrier` line it needs, if
    any), in its own indentation when it starts its line. A blank line before them when
    `spaced` (a list spaced throughout) or where a unit with a leading comment was set off
    by one; one after it where such a unit was followed by one."""
    text, u = body.text, p.unit
    has_lead = u.core.begin < u.decl.begin and (p.whole or p.fields[0] == u.fields[0])
    if spaced or has_lead and blank_line_before(text, u.core.begin):
        em.blank()
    if barrier:
        em.text(barrier)
    lead_line = only_blanks_before(text, u.core.begin)
    indent = indentation(text, u.core.begin) if lead_line else field_indent
    em.text(indent + piece + em.nl)
    if has_lead and blank_line_follows(text, u.core.end, body.body.end):
        em.blank()


def _spec_text(text: bytes, access: Access, pending: list[AccessSpec], indent: bytes,
               nl: bytes, inline: bool) -> bytes:
    """The text of a specifier of `access` the block emits: that of the first removed
    specifier with comments of that access in `pending` (taken from it), or a plain one."""
    spec = next((s for s in pending if s.access == access), None)
    if spec is None:
        return _spec(access) if inline else indent + _spec(access) + nl
    pending.remove(spec)
    if inline:
        return spec.core.text(text)
    own = indentation(text, spec.core.begin) if only_blanks_before(text, spec.core.begin) \
        else indent
    return own + spec.core.text(text) + nl


def _section_start(em: _Emitter, text: bytes, heading: Heading | None,
                   section: Heading | None, n: int) -> Heading | None:
    """Before a piece of section `heading` (the one before it was of `section`): the
    heading, with a blank line on each side, at the section's first piece; a blank line
    where the section changes later. Returns the piece's section."""
    if heading is not None and not em.has_heading(heading):
        em.blank()
        em.heading(heading, text[heading.span.begin:heading.span.end].rstrip(b" \t\r"))
        em.blank()
    elif n > 0 and heading is not section:
        em.blank()
    return heading
