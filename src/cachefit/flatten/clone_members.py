"""Step 1 of flattening (paper 001 §3), the copies: the text of the members copied into the
target.

The block inserted after the target's `{`: per base (in construction order) its nested types,
typedefs, statics, friends and functions; the renamed copies and init functions; then the
data members of the non-virtual bases in the order the compiler laid the subobjects out
(clang's record-layout dump). The block inserted before `}` holds the data members of the
virtual bases. Each copy is the member's source text with its local edits applied. Choosing
the members is `select_members`.
"""

from __future__ import annotations

from cachefit.edits import Edit, apply_to_slice, drop_contained
from cachefit.flatten import cx
from cachefit.flatten.cx import CK
from cachefit.flatten.drop_bases import head_edits
from cachefit.flatten.init_functions import Call, call_text, init_name, init_text
from cachefit.flatten.model import ClassInfo, Member
from cachefit.flatten.places import ctx_for
from cachefit.flatten.rename_refs import region_edits
from cachefit.flatten.state import FlatState


def member_unit(st: FlatState, m: Member) -> tuple[int, int]:
    """The member's bytes, extended over attributes written before it."""
    start, end = m.group[0].unit if m.group else m.unit
    f = cx.file_of(m.cursor)
    for c in m.cursor.get_children():
        if c.kind.is_attribute() and cx.file_of(c) == f:
            s = cx.span(c)[0]
            if s < start:
                start = s
    toks = st.src.tokens(f, max(0, start - 32), start)
    if len(toks) >= 2 and toks[-1].spelling == "[" and toks[-2].spelling == "[":
        start = toks[-2].begin
    elif len(toks) >= 3 and toks[-1].spelling == "(" and toks[-2].spelling == "(" and \
            toks[-3].spelling == "__attribute__":
        start = toks[-3].begin
    return start, end


def _access_line(indent: str, access: str) -> str:
    outer = indent[:-4] if len(indent) >= 4 else ""
    return f"{outer}{access}:\n"


def top_block(st: FlatState, indent: str, inits: list[Member], default_prologue: list[Call],
              epilogue: list[Member]) -> str:
    out: list[str] = ["\n"]
    cur: list[str | None] = [None]

    def emit(access: str, text: str) -> None:
        if access != cur[0]:
            out.append(_access_line(indent, access))
            cur[0] = access
        out.append(indent + text.strip("\n") + "\n")

    bases = [c for c in st.h.construction_order if not c.is_target]
    for c in bases:
        mems = [m for m in c.members if m in st.copied and m.kind not in ("field",)]
        if not mems:
            continue
        out.append(f"{indent}// flattened from {c.key}\n")
        for m in mems:
            emit(st.h.effective_access(m), member_copy_text(st, m, None))
    # renamed copies of hidden members and init functions
    extra = [st.h.members[k] for k in sorted(st.renames)]
    if extra or inits:
        out.append(f"{indent}// base versions and base constructors/destructors\n")
    for m in extra:
        emit("private", member_copy_text(st, m, st.renames[m.key]))
    for k in inits:
        emit("private", init_text(st, k, indent))
    # data members in layout order (non-virtual part)
    fields = _fields(st, virtual_part=False)
    if fields:
        out.append(f"{indent}// data members of the base classes, in layout order\n")
    for m in fields:
        emit(st.h.effective_access(m), member_copy_text(st, m, None))
    if default_prologue:
        calls = " ".join(call_text(st, c) for c in default_prologue)
        emit("public", f"{st.target.name}() {{ {calls} }}")
    if epilogue:
        calls = " ".join(f"{init_name(st, c)}();" for c in epilogue)
        emit("public", f"~{st.target.name}() {{ {calls} }}")
    if cur[0] is None:
        return ""
    first = next((c for c in st.target.body.get_children()
                  if c.kind != CK.CXX_BASE_SPECIFIER and not c.kind.is_attribute()), None)
    starts_with_access = first is not None and first.kind == CK.CXX_ACCESS_SPEC_DECL
    if cur[0] != st.target.default_access and not starts_with_access:
        out.append(_access_line(indent, st.target.default_access))
    return "".join(out).rstrip("\n")


def bottom_block(st: FlatState, indent: str) -> str:
    fields = _fields(st, virtual_part=True)
    if not fields:
        return ""
    out = [f"{indent}// data members of the virtual base classes, in layout order\n"]
    cur = None
    for m in fields:
        a = st.h.effective_access(m)
        if a != cur:
            out.append(_access_line(indent, a))
            cur = a
        out.append(indent + member_copy_text(st, m, None).strip("\n") + "\n")
    return "".join(out)


def _nonvirtual_closure(st: FlatState) -> set[str]:
    out = {st.target.key}
    stack = [st.target]
    while stack:
        c = stack.pop()
        for e in c.bases:
            if not e.virtual and e.cls.key not in out:
                out.add(e.cls.key)
                stack.append(e.cls)
    return out


def _fields(st: FlatState, virtual_part: bool) -> list[Member]:
    nv = _nonvirtual_closure(st)
    order = {c.key: i for i, c in enumerate(st.h.construction_order)}
    classes = [c for c in st.h.classes.values()
               if not c.is_target and ((c.key not in nv) == virtual_part)]

    def key(c: ClassInfo):
        lk = st.layout.order_key(c.key) if st.layout else None
        return (lk[1] if lk else 1 << 40, order[c.key])

    out: list[Member] = []
    for c in sorted(classes, key=key):
        seen: set[int] = set()
        for m in c.members:
            if m.kind == "field" and m in st.copied:
                first = m.group[0] if m.group else m
                if id(first) in seen:
                    continue
                seen.add(id(first))
                out.append(first)
    return out


def member_copy_text(st: FlatState, m: Member, new_name: str | None) -> str:
    f = cx.file_of(m.cursor)
    start, end = member_unit(st, m)
    ctx = ctx_for(st, m, m.cursor, True)
    edits = list(region_edits(st, m.cursor, ctx))
    for g in (m.group or [m])[1:]:
        edits += region_edits(st, g.cursor, ctx)
    edits += head_edits(st, m, m.cursor, start, new_name)
    if m.kind == "method" and m.pure:
        # a pure virtual function with a definition, called as Base::f(): its copy is
        # an ordinary function, so `= 0` goes
        toks = st.src.tokens(f, start, end)
        for i in range(len(toks) - 1, 1, -1):
            if toks[i].spelling == "0" and toks[i - 1].spelling == "=":
                edits.append(Edit(f, toks[i - 2].end, toks[i].end, "",
                                  "drop the pure specifier"))
                break
    text = apply_to_slice(st.src.data(f), start, end, drop_contained(edits))
    if m.kind == "type" and not text.rstrip().endswith(";"):
        text += ";"
    if m.kind == "method" and not text.rstrip().endswith((";", "}")):
        text += ";"
    if m.kind == "friend" and not text.rstrip().endswith(";"):
        text += ";"
    return text
