"""Rewrite order-dependent aggregate initialisers of the record (`--fix-initializers`).

C: each positional element gets its designator (`{1, 2}` -> `{.a = 1, .b = 2}`); designated
elements are left alone and the list stays in its written order, which C allows.
C++: designators must follow declaration order (C++20), so the list is rebuilt in the new
declaration order, positional elements designated; this needs C++20 for positional lists,
and every element must be free of side effects (calls, assignments, increments), because
reordering the elements reorders their evaluation. Anything else raises
`UnsafeTransformation` naming the site. Produces edits; writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cachefit.edits import Edit
from cachefit.errors import UnsafeTransformation
from cachefit.reorder.init_lists import InitSite

CXX20_STDS = ("c++20", "gnu++20", "c++2a", "gnu++2a", "c++23", "gnu++23", "c++2b", "gnu++2b",
              "c++26", "gnu++26", "c++2c", "gnu++2c")


def is_cxx20(args: Sequence[str]) -> bool:
    std = [a.removeprefix("-std=") for a in args if a.startswith("-std=")]
    return bool(std) and std[-1] in CXX20_STDS


def _refuse(site: InitSite, why: str) -> UnsafeTransformation:
    return UnsafeTransformation(f"cannot rewrite this initialiser of the record: {why}",
                                "write it with designators (or a constructor) by hand",
                                site.location)


def fix_site(site: InitSite, new_order: Sequence[str], read: Callable[[str], bytes],
             cxx20: bool) -> list[Edit]:
    """The edits that make `site` independent of the old order (or raise)."""
    if not site.fixable:
        raise _refuse(site, site.why_not)
    data = read(site.file)

    def src(span_begin: int, span_end: int) -> str:
        return data[span_begin:span_end].decode("utf-8", errors="surrogateescape")

    if not site.cxx:
        return [Edit(site.file, e.span.begin, e.span.begin, f".{e.member} = ",
                     "designate initialiser") for e in site.elements if not e.designated]
    if site.kind == "positional" and not cxx20:
        raise _refuse(site, "C++ designated initialisers need C++20 (-std=c++20)")
    if any(not e.pure for e in site.elements):
        raise _refuse(site, "an element has side effects, and C++ requires the elements in "
                      "declaration order, which would change the order they run in")
    members = [e.member for e in site.elements]
    if any(m is None or m == "" for m in members) or len(set(members)) != len(members):
        raise _refuse(site, "elements do not map one-to-one to named members")
    els = list(site.elements)
    for a, b in zip(els, els[1:], strict=False):
        if src(a.span.end, b.span.begin).strip() != ",":
            raise _refuse(site, "comments or macros between the elements")
    rank = {n: i for i, n in enumerate(new_order)}
    ordered = sorted(els, key=lambda e: rank[str(e.member)])
    parts = [src(e.span.begin, e.span.end) if e.designated else
             f".{e.member} = {src(e.span.begin, e.span.end)}" for e in ordered]
    return [Edit(site.file, els[0].span.begin, els[-1].span.end, ", ".join(parts),
                 "designated initialiser in the new order")]
