"""Step 5 of flattening (paper 001 §3): drop `virtual`, the base-specifier list and the bases.

`head_edits` drops `virtual` from a member's declaration head (and gives a renamed copy its
new name); `drop_base_specifiers` removes the target's base-specifier list; `remove_bases`
deletes the removed base classes with the comment lines right above them. Bases used outside
the hierarchy are kept (`places.class_removed`). `override` and `final` go with the other
local edits in `rename_refs`.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.edits import Edit
from cachefit.flatten import cx
from cachefit.flatten.model import Member
from cachefit.flatten.places import class_removed, delete_line_range, name_end
from cachefit.flatten.state import FlatState
from cachefit.frontend.source_text import Tok


def head_edits(st: FlatState, m: Member, cursor: ci.Cursor, start: int,
               new_name: str | None) -> list[Edit]:
    f = cx.file_of(cursor)
    name_off = cursor.location.offset
    out: list[Edit] = []
    toks = st.src.tokens(f, start, max(name_off, start))
    for i, t in enumerate(toks):
        if t.spelling == "virtual" and t.kind == "KEYWORD":
            nxt = toks[i + 1].begin if i + 1 < len(toks) else name_off
            out.append(Edit(f, t.begin, nxt, "", "drop virtual"))
    if new_name is not None:
        out.append(Edit(f, name_off, name_end(st, f, name_off, cursor), new_name,
                        "renamed copy"))
    return out


def remove_bases(st: FlatState) -> None:
    """Delete the base classes flattening removes, with the comment lines above them."""
    for c in st.h.classes.values():
        if c.is_target or not class_removed(st, c):
            continue
        f = c.file
        s, e = cx.span(c.body)
        nxt = st.src.next_token(f, e, 64)
        if nxt is not None and nxt.spelling == ";":
            e = nxt.end
        delete_line_range(st, f, s, e, comments=True)


def drop_base_specifiers(st: FlatState, toks: list[Tok], name: int, lbrace: int) -> None:
    """Remove the base-specifier list of the target (its tokens `toks`, the index of its name
    and of its `{`)."""
    colon = next((i for i in range(name, lbrace) if toks[i].spelling == ":"), None)
    if colon is not None:
        st.edits.replace(st.t_file, toks[colon - 1].end, toks[lbrace].begin, " ",
                         "drop bases")
