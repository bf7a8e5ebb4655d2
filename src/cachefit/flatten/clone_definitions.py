"""Step 2 of flattening (paper 001 §3): clone out-of-line definitions and adjust their scope.

`void arch_tcb::f()` becomes `void tcb::f()`: rewritten in place when it comes after the
target, moved behind the target when it comes before it or lives in another header (then
`inline`); a definition of a template base loses its `template<...>` header. Definitions of
members the flat class does not keep are deleted with a removed base. The references inside
are rewritten by `rename_refs`.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.edits import Edit, apply_to_slice, drop_contained
from cachefit.flatten import cx
from cachefit.flatten.checks import OutsideUse
from cachefit.flatten.cx import CK
from cachefit.flatten.drop_bases import head_edits
from cachefit.flatten.init_functions import init_def
from cachefit.flatten.model import Hierarchy, Member
from cachefit.flatten.places import (
    class_removed,
    ctx_for,
    delete_line_range,
    ensure_include,
    t_end,
    t_spell_at,
)
from cachefit.flatten.rename_refs import region_edits
from cachefit.flatten.state import FlatState


def _def_unit(st: FlatState, d: ci.Cursor) -> tuple[int, int]:
    f = cx.file_of(d)
    s, e = cx.span(d)
    nxt = st.src.next_token(f, e, 64)
    if nxt is not None and nxt.spelling == ";":
        e = nxt.end
    return s, e


def _place_def(st: FlatState, m: Member, d: ci.Cursor, removed: bool) -> None:
    f = cx.file_of(d)
    s, e = _def_unit(st, d)
    has_body = any(c.kind == CK.COMPOUND_STMT for c in d.get_children())
    wanted = m in st.copied or m.key in st.renames or \
        (m.kind in ("ctor", "dtor") and m.key in st.init_names and has_body)
    if not wanted:
        if removed:
            delete_line_range(st, f, s, e)
        return
    dest, in_place = _destination(st, d, f, s)
    text = _def_text(st, m, d, dest != st.main_file and not in_place, in_place)
    if in_place:
        if removed:
            st.edits.replace(f, s, e, text, f"definition of {m.qualified}")
        else:
            st.edits.insert(f, e, "\n\n" + text, f"copy of {m.qualified}")
        if st.include_target and f == st.main_file:
            ensure_include(st, f)
    else:
        if removed:
            delete_line_range(st, f, s, e)
        st.edits.insert(dest, t_end(st), "\n\n" + text,
                        f"moved definition of {m.qualified}")


def _destination(st: FlatState, d: ci.Cursor, f: str, s: int) -> tuple[str, bool]:
    """Where the target's copy of out-of-line definition `d` goes: (file, in place?)."""
    if f == st.t_file:
        return (f, True) if s > cx.span(st.target.decl)[1] else (f, False)
    if f == st.main_file:
        return f, True
    return st.t_file, False


def _def_text(st: FlatState, m: Member, d: ci.Cursor, add_inline: bool, in_place: bool) -> str:
    f = cx.file_of(d)
    data = st.src.data(f)
    s, e = _def_unit(st, d)
    if m.kind in ("ctor", "dtor"):
        tpl = _template_header(st, d)
        qual = (t_spell_at(st, d) if in_place else st.t_ns_spell) + "::"
        had_inline = any(t.spelling == "inline" for t in
                         st.src.tokens(f, s, d.location.offset))
        pre = "inline " if (tpl or add_inline or had_inline) else ""
        return pre + init_def(st, m, d, qual, in_class=False)
    ctx = ctx_for(st, m, d, False)
    edits = list(region_edits(st, d, ctx))
    if not in_place:
        edits = _respell_for_target_scope(st, d, edits)
    new_name = st.renames.get(m.key)
    edits += head_edits(st, m, d, s, new_name)
    tpl = _template_header(st, d)
    inline = add_inline and not any(t.spelling == "inline" for t in
                                    st.src.tokens(f, s, d.location.offset))
    if tpl is not None:
        edits.append(Edit(f, tpl[0], tpl[1], "inline ", "drop template header"))
    elif inline:
        edits.append(Edit(f, s, s, "inline ", "inline in a header"))
    return apply_to_slice(data, s, e, drop_contained(edits))


def _respell_for_target_scope(st: FlatState, d: ci.Cursor, edits: list[Edit]) -> list[Edit]:
    out = []
    for ed in edits:
        if ed.text == t_spell_at(st, d) and ed.why.startswith("base"):
            out.append(Edit(ed.file, ed.start, ed.end, st.t_ns_spell, ed.why))
        else:
            out.append(ed)
    return out


def _template_header(st: FlatState, d: ci.Cursor) -> tuple[int, int] | None:
    toks = st.src.cursor_tokens(d)
    if len(toks) < 2 or toks[0].spelling != "template" or toks[1].spelling != "<":
        return None
    j = cx.matching_angle(toks, 1)
    nxt = toks[j + 1].begin if j + 1 < len(toks) else toks[j].end
    return toks[0].begin, nxt


def adopt_out_of_line(h: Hierarchy, outside: OutsideUse) -> None:
    """Add the out-of-line member definitions the walk outside the hierarchy found to their
    members' `defs`: an instantiated definition points into its template's definition, so
    the definition as written (the larger extent) is kept."""
    for d in outside.out_of_line:
        m = h.member_of(d)
        if m is None or d in m.defs:
            continue
        f, (s, e) = cx.file_of(d), cx.span(d)
        inside = [o for o in m.defs if cx.file_of(o) == f and
                  cx.span(o)[0] <= s and e <= cx.span(o)[1]]
        if inside:
            continue
        m.defs[:] = [o for o in m.defs if not (cx.file_of(o) == f and
                                               s <= cx.span(o)[0] and
                                               cx.span(o)[1] <= e)]
        m.defs.append(d)


def place_definitions(st: FlatState) -> None:
    """Rewrite, move or delete every out-of-line definition of a base member."""
    for c in st.h.classes.values():
        if c.is_target:
            continue
        removed = class_removed(st, c)
        for m in c.members:
            for d in m.defs:
                _place_def(st, m, d, removed)
