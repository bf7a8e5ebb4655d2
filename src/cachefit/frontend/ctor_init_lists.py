"""Keep C++ constructor initialiser lists in declaration order after reordering.

Members are initialised in declaration order whatever the order of a constructor's
mem-initialiser list, so reordering the list changes nothing at run time; it only keeps
`-Wreorder` (part of `-Wall`, fatal under `-Werror`) quiet. Which initialisers read other
members is a constraint found by code_scan, not handled here. `find_lists` locates the
member initialisers of the record's constructors (by cursors and tokens); `reorder_list`
produces the edits that put them in the new order, each initialiser moving as its source
text with the comment that ends its line; base-class initialisers stay where they are.
Nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.edits import Edit
from cachefit.errors import Location
from cachefit.frontend.clang_util import CK, children, kind_of, location
from cachefit.frontend.source_text import Span, tokens_of


@dataclass(frozen=True)
class InitList:
    """The member initialisers of one constructor: (member, text span) in written order;
    per initialiser the comment that ends its line (`a_(a),  // the first`; for the last
    one also after a `{}` body on that line) and where such a comment would go (after the
    `,` or the body's `}`)."""

    file: str
    location: Location
    items: tuple[tuple[str, Span], ...]
    comments: tuple[Span | None, ...] = ()
    tails: tuple[int | None, ...] = ()          # None: code follows on that line

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.items[0][1].begin)


def find_list(ctor: ci.Cursor, field_name: Callable[[ci.Cursor], str | None]
              ) -> InitList | None:
    """The member initialiser list of constructor `ctor` (None if fewer than two)."""
    loc = location(ctor)
    if loc is None:
        return None
    toks = tokens_of(ctor)
    by_begin = {t.begin: i for i, t in enumerate(toks)}
    items: list[tuple[str, Span]] = []
    for k in children(ctor):
        if kind_of(k) != CK.MEMBER_REF:
            continue
        name = field_name(k.referenced)
        ext = k.extent
        if name is None or ext.start.file is None or ext.start.file.name != loc.file:
            return None
        i = by_begin.get(ext.start.offset)
        if i is None or i + 1 >= len(toks) or toks[i + 1].spelling not in ("(", "{"):
            return None
        depth, j = 0, i + 1
        while j < len(toks):
            s = toks[j].spelling
            if s in ("(", "{", "["):
                depth += 1
            elif s in (")", "}", "]"):
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= len(toks):
            return None
        items.append((name, Span(toks[i].begin, toks[j].end)))
    if len(items) < 2:
        return None
    comments, tails = _line_comments(ctor, items)
    return InitList(loc.file, loc, tuple(items), comments, tails)


def _line_comments(ctor: ci.Cursor, items: list[tuple[str, Span]]
                   ) -> tuple[tuple[Span | None, ...], tuple[int | None, ...]]:
    """Each initialiser's comment at the end of its line, and the offset after its `,` (or
    the body's braces on that line): tokens of the constructor up to the end of the line
    where it ends, so a comment after `{}` counts."""
    ext = ctor.extent
    tu = ctor.translation_unit
    toks = [(t.kind.name, t.spelling, t.extent.start.offset, t.extent.end.offset,
             t.extent.start.line) for t in ctor.get_tokens()]
    if ext.start.file is not None:
        # the rest of the last line: the start of the next one (none past the file's end)
        following = ci.SourceLocation.from_position(tu, ext.start.file, ext.end.line + 1, 1)
        if following.file is not None and following.offset > ext.end.offset:
            rng = ci.SourceRange.from_locations(ext.start, following)
            toks = [(t.kind.name, t.spelling, t.extent.start.offset, t.extent.end.offset,
                     t.extent.start.line) for t in tu.get_tokens(extent=rng)]
    comments: list[Span | None] = []
    tails: list[int | None] = []
    for k, (_, span) in enumerate(items):
        nxt = items[k + 1][1].begin if k + 1 < len(items) else None
        after = [t for t in toks if t[2] >= span.end]
        line = next((t[4] for t in toks if t[3] == span.end), None)
        tail: int | None = span.end
        found = None
        for n, (kind, text, begin, end, ln) in enumerate(after):
            if ln != line:
                break
            if nxt is not None and begin >= nxt:
                tail = None             # the next initialiser on the same line
                break
            if kind == "COMMENT":
                # it ends the line: nothing after it there (not `a(1), /* b */ b(2)`)
                if all(t[4] != line for t in after[n + 1:]):
                    found = Span(begin, end)
                break
            if not (text == "," or text == "}" or text == "{" and n + 1 < len(after)
                    and after[n + 1][1] == "}"):
                tail = None             # only `,` or an empty body `{}` before it
                break
            tail = end
        comments.append(found)
        tails.append(tail)
    return tuple(comments), tuple(tails)


def reorder_list(lst: InitList, new_order: Sequence[str], data: bytes) -> list[Edit]:
    """Edits that put the list's member initialisers in `new_order` (none if already)."""
    rank = {n: i for i, n in enumerate(new_order)}
    wanted = sorted(lst.items, key=lambda it: rank.get(it[0], len(rank)))
    if [n for n, _ in wanted] == [n for n, _ in lst.items]:
        return []
    edits = []
    index = {name: k for k, (name, _) in enumerate(lst.items)}
    # comments move only when every line that must take one ends with its initialiser
    movable = bool(lst.comments) and all(
        lst.tails[k] is not None for k, (name, _) in enumerate(wanted)
        if lst.comments[index[name]] is not None or lst.comments[k] is not None)
    for k, ((_, slot), (name, span)) in enumerate(zip(lst.items, wanted, strict=True)):
        if slot != span:
            edits.append(Edit(lst.file, slot.begin, slot.end,
                              data[span.begin:span.end].decode("utf-8", "surrogateescape"),
                              f"initialiser of {name} in declaration order"))
        if not movable:
            continue
        here, moved = lst.comments[k], lst.comments[index[name]]
        why = f"the comment of {name}'s initialiser"
        text = "" if moved is None else \
            data[moved.begin:moved.end].decode("utf-8", "surrogateescape")
        if here is not None and here != moved:
            start = here.begin
            tail = lst.tails[k]
            if moved is None and tail is not None:   # drop the blanks before it too
                while start > tail and data[start - 1:start] in (b" ", b"\t"):
                    start -= 1
            edits.append(Edit(lst.file, start, here.end, text, why))
        elif here is None and moved is not None:
            tail = lst.tails[k]
            assert tail is not None
            edits.append(Edit(lst.file, tail, tail, "  " + text, why))
    return edits
