"""Whether preprocessor conditionals in a member list can change which data members exist.

Rewriting the source reorders the members of one configuration; an `#if` that decides
whether a data member exists (or how it is declared) makes the result depend on the
configuration, so it is refused. Many conditionals cannot do that, and are allowed:

- one inside a member function's body (`#ifndef NDEBUG` in an inline method): all the
  directives of the `#if ... #endif` group lie in the same function body, and the code
  of the active branch and of every skipped branch has balanced braces, so no branch
  can end the body (and declare members after it) in another configuration;
- one outside function bodies that lies entirely before the first data member or after
  the last (snappy's `#if` around an attribute of a method declared after the fields),
  contains no data member declaration and no access specifier, has balanced braces and
  skipped nothing outside function bodies (skipped code has no syntax tree: it could
  declare a member).

A group that is not closed inside the member list is refused too. Groups are matched by
nesting over the directive lines the member reader found (rewrite.member_units); function
bodies are the compound statements of the record's (and nested records') member functions
in the parsed unit; skipped code comes from libclang (inactive_code). Reads only.
"""

from __future__ import annotations

from collections.abc import Sequence

import clang.cindex as ci

from cachefit.frontend.clang_util import CK, children, kind_of
from cachefit.frontend.member_units import AccessSpec, Directive, RecordBody
from cachefit.frontend.source_text import Span, Tok, tokens_of
from cachefit.reorder.constraints import Refusal
from cachefit.reorder.inactive_code import skipped_ranges

_OPEN = {"if", "ifdef", "ifndef"}
_NEXT = {"elif", "elifdef", "elifndef", "else"}
CONDITIONALS = _OPEN | _NEXT | {"endif"}

_FUNCTIONS = {CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR, CK.CONVERSION_FUNCTION,
              CK.FUNCTION_TEMPLATE, CK.FUNCTION_DECL}
_SCOPES = {CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL, CK.CLASS_TEMPLATE,
           CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, CK.FRIEND_DECL}
_OPEN_BRACES = {"{", "<%"}
_CLOSE_BRACES = {"}", "%>"}


def _span_in(c: ci.Cursor, file: str) -> Span | None:
    ext = c.extent
    if ext.start.file is None or ext.end.file is None or ext.start.file.name != file or \
            ext.end.file.name != file:
        return None
    return Span(ext.start.offset, ext.end.offset)


def function_bodies(decl: ci.Cursor, file: str) -> list[Span]:
    """The bodies (`{ ... }`) of the member functions defined in the record, nested
    records and friends included, as spans of `file`."""
    out: list[Span] = []
    stack = children(decl)
    while stack:
        c = stack.pop()
        k = kind_of(c)
        if k in _FUNCTIONS:
            for b in children(c):
                sp = _span_in(b, file) if kind_of(b) == CK.COMPOUND_STMT else None
                if sp is not None:
                    out.append(sp)
        elif k in _SCOPES:
            stack.extend(children(c))
    return out


def _groups(directives: Sequence[Directive]
            ) -> tuple[list[list[Directive]], Directive | None]:
    """The `#if ... #endif` groups (nested ones too), and a directive whose group is not
    closed inside the member list, if any."""
    groups: list[list[Directive]] = []
    stack: list[list[Directive]] = []
    for d in directives:
        if d.name in _OPEN:
            stack.append([d])
            continue
        if not stack:
            return groups, d
        stack[-1].append(d)
        if d.name == "endif":
            groups.append(stack.pop())
    return groups, (stack[0][0] if stack else None)


def _balanced(toks: Sequence[Tok]) -> bool:
    depth = 0
    for t in toks:
        if t.kind != "PUNCTUATION":
            continue
        if t.spelling in _OPEN_BRACES:
            depth += 1
        elif t.spelling in _CLOSE_BRACES:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _overlaps(a: Span, b: Span) -> bool:
    return a.begin < b.end and b.begin < a.end


class _Member:
    """What the checks of one record need: tokens, function bodies, skipped code, fields."""

    def __init__(self, decl: ci.Cursor, body: RecordBody) -> None:
        self.bodies = function_bodies(decl, body.file)
        self.skipped = [Span(r.start.offset, r.end.offset)
                        for r in skipped_ranges(decl.translation_unit)
                        if r.start.file is not None and r.start.file.name == body.file
                        and _overlaps(Span(r.start.offset, r.end.offset), body.body)]
        lines = [d.span for d in body.directives]
        self.code = [t for t in tokens_of(decl) if t.kind != "COMMENT"
                     and not any(s.begin <= t.begin < s.end for s in lines)]
        self.fields = [u.decl for u in body.units]
        self.access = [i.decl for i in body.items if isinstance(i, AccessSpec)]

    def braces_ok(self, region: Span) -> bool:
        """The active code of `region` and the code of each skipped range in it have
        balanced braces."""
        def skipped(t: Tok) -> bool:
            return any(s.begin <= t.begin < s.end for s in self.skipped)
        inside = [t for t in self.code if region.begin <= t.begin < region.end]
        if not _balanced([t for t in inside if not skipped(t)]):
            return False
        return all(_balanced([t for t in inside if s.begin <= t.begin < s.end])
                   for s in self.skipped if _overlaps(s, region))

    def in_one_body(self, group: Sequence[Directive]) -> bool:
        return any(all(b.begin < d.span.begin and d.span.end <= b.end for d in group)
                   for b in self.bodies)

    def clear_of_fields(self, region: Span) -> bool:
        if not self.fields or any(_overlaps(f, region) for f in self.fields + self.access):
            return False
        first = min(f.begin for f in self.fields)
        last = max(f.end for f in self.fields)
        if not (region.end <= first or region.begin >= last):
            return False
        return not any(_overlaps(s, region) and not any(b.contains(s) for b in self.bodies)
                       for s in self.skipped)


def conditional_refusal(decl: ci.Cursor, body: RecordBody, name: str) -> Refusal | None:
    """A refusal for the first conditional group of the member list that may change which
    data members exist (see the module doc), or None."""
    conds = [d for d in body.directives if d.name in CONDITIONALS]
    if not conds:
        return None
    groups, stray = _groups(conds)
    bad = stray
    if bad is None:
        m = _Member(decl, body)
        for g in sorted(groups, key=lambda g: g[0].span.begin):
            region = Span(g[0].span.begin, g[-1].span.end)
            if not m.braces_ok(region) or not (m.in_one_body(g) or m.clear_of_fields(region)):
                bad = g[0]
                break
    if bad is None:
        return None
    return Refusal(f"the member list of {name} has preprocessor conditionals (#{bad.name}); "
                   "which members exist depends on the configuration",
                   "use the build-time mode (reorder the preprocessed unit, see "
                   "docs/reorder.md) instead of rewriting the source", bad.location)
