"""Keep C++ constructor initialiser lists in declaration order after reordering.

Members are initialised in declaration order whatever the order of a constructor's
mem-initialiser list, so reordering the list changes nothing at run time; it only keeps
`-Wreorder` (part of `-Wall`, fatal under `-Werror`) quiet. Which initialisers read other
members is a constraint found by code_scan, not handled here. `find_lists` locates the
member initialisers of the record's constructors (by cursors and tokens); `reorder_list`
produces the edits that put them in the new order, each initialiser moving as its source
text; base-class initialisers stay where they are. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.reorder.clang_util import CK, children, kind_of, location
from cachefit.rewrite.edits import Edit
from cachefit.rewrite.source_text import Span, tokens_of


@dataclass(frozen=True)
class InitList:
    """The member initialisers of one constructor: (member, text span) in written order."""

    file: str
    location: Location
    items: tuple[tuple[str, Span], ...]

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
    return InitList(loc.file, loc, tuple(items))


def reorder_list(lst: InitList, new_order: Sequence[str], data: bytes) -> list[Edit]:
    """Edits that put the list's member initialisers in `new_order` (none if already)."""
    rank = {n: i for i, n in enumerate(new_order)}
    wanted = sorted(lst.items, key=lambda it: rank.get(it[0], len(rank)))
    if [n for n, _ in wanted] == [n for n, _ in lst.items]:
        return []
    edits = []
    for (_, slot), (name, span) in zip(lst.items, wanted, strict=True):
        if slot != span:
            edits.append(Edit(lst.file, slot.begin, slot.end,
                              data[span.begin:span.end].decode("utf-8", "surrogateescape"),
                              f"initialiser of {name} in declaration order"))
    return edits
