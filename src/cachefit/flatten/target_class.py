"""The edits of the target class's own definition, from every step.

Its base-specifier list goes (step 5); its members' references are rewritten and `virtual`
dropped (steps 3 and 5); its constructors and destructor call the init functions (step 4);
the copied members go after its `{` and the virtual bases' data members before its `}`
(step 1). Each part is computed by its step's module; this one puts them in the target.
"""

from __future__ import annotations

from cachefit.edits import drop_contained
from cachefit.flatten import cx
from cachefit.flatten.clone_members import bottom_block, member_unit, top_block
from cachefit.flatten.ctor_defs import ctor_def
from cachefit.flatten.drop_bases import drop_base_specifiers, head_edits
from cachefit.flatten.init_functions import Call
from cachefit.flatten.model import Member
from cachefit.flatten.places import ctx_for, definition_of, indent
from cachefit.flatten.rename_refs import region_edits
from cachefit.flatten.state import FlatState
from cachefit.flatten.target_ctors import edit_target_ctor, edit_target_dtor


def edit_target(st: FlatState, t_ctors: list[Member], t_dtor: Member | None,
                inits: list[Member], prologues: dict[cx.Key | None, list[Call]],
                default_prologue: list[Call], epilogue: list[Member]) -> None:
    """Add the target's own edits (see the module docstring) to `st.edits`."""
    tdecl = st.target.decl
    f = st.t_file
    toks = st.src.cursor_tokens(tdecl)
    name_off = tdecl.location.offset
    ni = next(i for i, t in enumerate(toks) if t.begin >= name_off)
    lb = next(i for i in range(ni, len(toks)) if toks[i].spelling == "{")
    drop_base_specifiers(st, toks, ni, lb)
    members = [m for m in st.target.members]
    ind = indent(members[0].cursor) if members else indent(tdecl) + "    "
    # T's own members: references, virtual/override/final
    for m in members:
        ctx = ctx_for(st, m, m.cursor, True)
        es = list(region_edits(st, m.cursor, ctx))
        es += head_edits(st, m, m.cursor, member_unit(st, m)[0], None)
        st.edits.extend(drop_contained(es))
        for d in m.defs:
            es = list(region_edits(st, d, ctx_for(st, m, d, False)))
            st.edits.extend(drop_contained(es))
    # constructors and destructor of T
    for m in t_ctors:
        d = definition_of(st, m)
        if d is None or m.deleted:
            continue
        edit_target_ctor(st, ctor_def(st, d), prologues.get(cx.loc_key(d), []))
    if t_dtor is not None and epilogue:
        d = definition_of(st, t_dtor)
        if d is not None:
            edit_target_dtor(st, d, epilogue)
    # the block of copied members after '{'
    top = top_block(st, ind, inits, default_prologue if not t_ctors else [],
                    epilogue if t_dtor is None else [])
    if top:
        st.edits.insert(f, toks[lb].end, top, "copied members")
    bottom = bottom_block(st, ind)
    if bottom:
        rb = toks[-1]
        line_start = st.src.data(f).rfind(b"\n", 0, rb.begin) + 1
        at = line_start if not st.src.data(f)[line_start:rb.begin].strip() else rb.begin
        st.edits.insert(f, at, bottom, "virtual-base data members")
