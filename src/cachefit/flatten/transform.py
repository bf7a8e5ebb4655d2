"""The five steps of class flattening (paper 001, §3), run in order on one unit.

1. Clone the members of the base classes into the target (`select_members` chooses,
   breadth-first from the target, so that the final overrider wins; `clone_members` writes
   them, data members in the order the compiler laid the subobjects out).
2. Clone out-of-line member definitions and move them to the target's scope
   (`clone_definitions`).
3. Rename base-class types (and template parameters of template bases) in cloned code
   (`rename_refs`, `enclosing_scope`).
4. Turn base constructors and destructors into member functions of the target, called from
   its constructors and destructor in the order C++ runs them (`init_functions`,
   `target_ctors`).
5. Drop `virtual`, `override`, `final`, the base-specifier list and the base classes
   (`drop_bases`).

`plan_unit` creates the shared `FlatState`, runs the steps and returns one edit list, applied
at once by the caller. All edits are computed from AST extents and libclang tokens; the copied
text is the source text of those extents with local edits applied. Nothing is written here.
"""

from __future__ import annotations

from cachefit.flatten import cx
from cachefit.flatten.checks import OutsideUse
from cachefit.flatten.clone_definitions import adopt_out_of_line, place_definitions
from cachefit.flatten.ctor_defs import ctor_def
from cachefit.flatten.cx import Key
from cachefit.flatten.drop_bases import remove_bases
from cachefit.flatten.init_functions import (
    Call,
    default_ctor,
    dtor_of,
    epilogue,
    init_is_empty,
    init_name,
    prologue,
    user_ctor,
)
from cachefit.flatten.layout import TargetLayout
from cachefit.flatten.model import Hierarchy, Member
from cachefit.flatten.places import ctx_for, definition_of
from cachefit.flatten.plan_report import plan_report
from cachefit.flatten.rename_refs import region_edits, rename_static_refs
from cachefit.flatten.select_members import select_members
from cachefit.flatten.state import Facts, FlatState, FlattenPlan
from cachefit.flatten.target_class import edit_target


def plan_unit(h: Hierarchy, src: cx.Source, main_file: str, outside: OutsideUse,
              layout: TargetLayout | None, include_target: str | None = None,
              seeds: Facts | None = None) -> FlattenPlan:
    """The edits that flatten `h.target` in one unit, its report, and the facts it learned.

    `include_target` is the header to `#include` in a source that defines base members
    without seeing the target; `seeds` are the facts other units of the build learned."""
    adopt_out_of_line(h, outside)
    st = FlatState.create(h, src, main_file, outside, layout, include_target, seeds)
    select_members(st)
    rename_static_refs(st)
    t_ctors = [m for m in st.target.members if m.kind == "ctor"]
    t_dtor = dtor_of(st.target)
    # init functions: every user-provided base constructor/destructor that does something
    inits: list[Member] = []
    for c in st.h.construction_order:
        if c.is_target:
            continue
        for m in c.members:
            if m.kind in ("ctor", "dtor") and user_ctor(m) and \
                    not init_is_empty(st, m):
                inits.append(m)
                init_name(st, m)
    # renamed copies other units asked for
    for key, name in sorted(st.seeds.renames.items()):
        m = st.h.members.get(key)
        if m is not None and key not in st.renames:
            st.renames[key] = name
            st.queue.append(m)
    # the regions whose references are rewritten
    for m in st.target.members:
        st.queue.append(m)
    st.queue.extend(st.copied)
    st.queue.extend(inits)
    done: set[tuple[Key, str]] = set()
    while st.queue:
        m = st.queue.pop(0)
        if (m.key, m.kind) in done:
            continue
        done.add((m.key, m.kind))
        is_init = m.kind in ("ctor", "dtor")
        region_edits(st, m.cursor, ctx_for(st, m, m.cursor, True, ctor=is_init))
        for d in m.defs:
            region_edits(st, d, ctx_for(st, m, d, False, ctor=is_init))
    # T's constructors (their definitions in this unit)
    prologues: dict[Key | None, list[Call]] = {}
    for m in t_ctors:
        if m.deleted:
            continue
        d = definition_of(st, m)
        if d is None:
            continue
        cd = ctor_def(st, d)
        prologues[cx.loc_key(d)] = prologue(st, cd)
    default_prologue = prologue(st, None) if not t_ctors else []
    if default_prologue and any(
            default_ctor(e.cls) is None and any(
                mm.kind == "ctor" for mm in e.cls.members)
            for e in st.target.bases):
        default_prologue = []   # the target had no default constructor
    destroy = epilogue(st)
    _flush_renamed(st)
    edit_target(st, t_ctors, t_dtor, inits, prologues, default_prologue, destroy)
    remove_bases(st)
    place_definitions(st)
    facts = Facts(dict(st.renames), dict(st.empty_known))
    return FlattenPlan(st.edits, plan_report(st, inits), st.warnings, facts)


def _flush_renamed(st: FlatState) -> None:
    """Rewrite the regions of the renamed copies scheduled while rewriting others."""
    done: set[Key] = set()
    while True:
        pending = [m for m in st.queue if m.key not in done]
        st.queue.clear()
        if not pending:
            break
        for m in pending:
            done.add(m.key)
            region_edits(st, m.cursor, ctx_for(st, m, m.cursor, True))
            for d in m.defs:
                region_edits(st, d, ctx_for(st, m, d, False))
