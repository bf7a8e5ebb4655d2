"""Step 4 of flattening, the target's side: its constructors and destructor call the init
functions.

Base initializers leave the target's constructors and become calls of the init functions at
the start of the body (member initializers that read base members move after them); the
destructor calls the destructor functions after its own body. Only whitespace around the
body's braces is edited, so the edits inside the body stay valid. Writing the init functions
themselves is `init_functions`.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.ctor_defs import CtorDef, Item
from cachefit.flatten.cx import CK
from cachefit.flatten.init_functions import (
    Call,
    assignment,
    call_text,
    dummy_member,
    init_name,
    is_constexpr,
)
from cachefit.flatten.model import Member
from cachefit.flatten.places import ctx_for, indent
from cachefit.flatten.problems import Unsupported
from cachefit.flatten.rename_refs import region_edits
from cachefit.flatten.state import FlatState


def edit_target_ctor(st: FlatState, cd: CtorDef | None, calls: list[Call]) -> None:
    if cd is None:
        return
    f = cd.file
    region = cd.cursor
    ctx = ctx_for(st, st.h.member_of(region) or dummy_member(st, region), region,
                  region in [m.cursor for m in st.target.members])
    edits = region_edits(st, region, ctx)
    removed = [i for i in cd.items if i.kind == "base"]
    kept = [i for i in cd.items if i.kind != "base"]
    moved: list[str] = []
    state_refs = [i for i in kept if i.kind == "member" and _reads_hierarchy(st, cd, i)]
    if calls and state_refs:
        for i in state_refs:
            text = assignment(st, i, edits, f)
            if text:
                moved.append(text)
        removed += state_refs
        kept = [i for i in kept if i not in state_refs]
    if removed:
        if not kept:
            st.edits.replace(f, cd.colon.begin, cx.span(cd.body)[0], "",
                             "drop base initializers")
            prev = st.src.prev_token(f, cd.colon.begin)
            if prev is not None:
                st.edits.replace(f, prev.end, cd.colon.begin, " ", "space")
        else:
            order = cd.items
            last_kept = max(order.index(i) for i in kept)
            tail_start = None
            for idx, it in enumerate(order):
                if it in kept:
                    continue
                if idx < last_kept:
                    st.edits.delete(f, it.start, order[idx + 1].start,
                                    "drop base initializer")
                elif tail_start is None:
                    tail_start = order[last_kept].end
            if tail_start is not None:
                st.edits.delete(f, tail_start, order[-1].end, "drop base initializers")
    lines = [call_text(st, c) for c in calls] + moved
    if not lines:
        return
    outer = indent(region)
    if cd.default_range is not None:
        s, e = cd.default_range
        body = "".join(f"\n{outer}    {ln}" for ln in lines)
        st.edits.replace(f, s, e, "{" + body + "\n" + outer + "}",
                         "defaulted constructor")
        return
    if cd.body is None:
        return
    _body_edits(st, f, cd.body, lines, [], outer)
    if is_constexpr(st, cd.cursor):
        tok = next(t for t in st.src.cursor_tokens(cd.cursor) if t.spelling == "constexpr")
        nxt = st.src.next_token(f, tok.end)
        st.edits.delete(f, tok.begin, nxt.begin if nxt else tok.end, "drop constexpr")
        st.warnings.append(f"{cx.presumed(cd.cursor)}: constructor of {st.target.key} is no "
                           "longer constexpr (base members are assigned in its body)")


def _body_edits(st: FlatState, f: str, body: ci.Cursor, head: list[str], tail: list[str],
                outer: str) -> None:
    """Put statements at the start (`head`) and the end (`tail`) of a compound statement,
    editing only whitespace so that the edits inside the body stay valid."""
    data = st.src.data(f)
    bs, be = cx.span(body)
    close = be - 1
    ind = outer + "    "
    inner = data[bs + 1:close]
    if b"\n" not in inner:
        if not inner.strip():
            text = "".join(f"\n{ind}{ln}" for ln in head + tail)
            st.edits.replace(f, bs + 1, close, text + "\n" + outer, "body statements")
            return
        first = bs + 1 + (len(inner) - len(inner.lstrip()))
        last = close - (len(inner) - len(inner.rstrip()))
        st.edits.replace(f, bs + 1, first,
                         "".join(f"\n{ind}{ln}" for ln in head) + "\n" + ind,
                         "body head")
        st.edits.replace(f, last, close,
                         "".join(f"\n{ind}{ln}" for ln in tail) + "\n" + outer,
                         "body tail")
        return
    if head:
        st.edits.insert(f, bs + 1, "".join(f"\n{ind}{ln}" for ln in head), "body head")
    if tail:
        line_start = data.rfind(b"\n", 0, close) + 1
        if not data[line_start:close].strip():
            st.edits.insert(f, line_start, "".join(f"{ind}{ln}\n" for ln in tail),
                            "body tail")
        else:
            st.edits.insert(f, close, "".join(f"\n{ind}{ln}" for ln in tail) + "\n"
                            + outer, "body tail")


def _reads_hierarchy(st: FlatState, cd: CtorDef, item: Item) -> bool:
    for n in cx.walk(cd.cursor):
        s, e = cx.span(n)
        if s < item.inner[0] or e > item.inner[1]:
            continue
        if n.kind == CK.CXX_THIS_EXPR:
            return True
        if n.kind in (CK.MEMBER_REF_EXPR, CK.DECL_REF_EXPR) and \
                st.h.member_of(n.referenced) is not None:
            return True
    return False


def edit_target_dtor(st: FlatState, d: ci.Cursor, calls: list[Member]) -> None:
    f = cx.file_of(d)
    outer = indent(d)
    lines = [f"{init_name(st, c)}();" for c in calls]
    body = next((c for c in d.get_children() if c.kind == CK.COMPOUND_STMT), None)
    if body is None:
        toks = st.src.cursor_tokens(d)
        i = next((k for k, t in enumerate(toks) if t.spelling == "default"), None)
        if i is None:
            return
        text = "".join(f"\n{outer}    {ln}" for ln in lines)
        st.edits.replace(f, toks[i - 1].begin, toks[i].end,
                         "{" + text + "\n" + outer + "}", "defaulted dtor")
        return
    if any(n.kind == CK.RETURN_STMT for n in cx.walk(body)):
        raise Unsupported(f"the destructor of {st.target.key} returns early",
                          "remove the return statement so the base destructors run",
                          cx.presumed(d), code="unsupported-dtor-return")
    _body_edits(st, f, body, [], lines, outer)
