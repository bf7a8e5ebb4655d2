"""`static_assert`s on the record's size, turned into size constraints.

`static_assert(sizeof(T) == N)` (or `_Static_assert`, with any constant expression for N)
means the reordered record must still be exactly N bytes; `sizeof(T) <= N`, `< N` and the
mirrored forms (`N >= sizeof(T)`) bound it from above. Each becomes an `OrderConstraint` of
kind "size" (exact) or "max_size" (at most `boundary` bytes) with the assert's location;
the optimizer gets the bound as its size limit and the rewriter checks the compiler's
sizeof against it. Asserts on member offsets are handled by `asm_uses.static_assert_pin`;
lower bounds (`sizeof(T) >= N`) never break under reordering within the size limit and are
ignored. This module reads cursors only; it does not choose orders or check layouts.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.frontend.clang_util import CK, children, kind_of, location
from cachefit.reorder.constraints import OrderConstraint
from cachefit.reorder.offset_forms import SIZE, OffsetEvaluator

# Comparison with sizeof on the left: what it asks of the size (kind, bound = N + delta).
_LEFT = {"==": ("size", 0), "<=": ("max_size", 0), "<": ("max_size", -1)}
_MIRROR = {"==": "==", "<=": ">=", "<": ">", ">=": "<=", ">": "<"}


def static_assert_size(stmt: ci.Cursor, ev: OffsetEvaluator, type_name: str
                       ) -> list[OrderConstraint]:
    """Size constraints from one `static_assert` (empty when it does not bound sizeof(T))."""
    kids = children(stmt)
    if not kids:
        return []
    out: list[OrderConstraint] = []
    stack = [kids[0]]
    while stack:
        cur = stack.pop()
        k = kind_of(cur)
        if k == CK.BINARY_OPERATOR and cur.spelling in _MIRROR:
            sides = children(cur)
            con = _compare(cur.spelling, sides, ev, type_name, stmt) if len(sides) == 2 \
                else None
            if con is not None:
                out.append(con)
                continue
        if k == CK.BINARY_OPERATOR and cur.spelling not in ("&&",):
            continue      # `a || b`, `!(...)`: no single bound follows from the assert
        if k == CK.UNARY_OPERATOR:
            continue
        stack.extend(children(cur))
    return out


def _compare(op: str, sides: list[ci.Cursor], ev: OffsetEvaluator, type_name: str,
             stmt: ci.Cursor) -> OrderConstraint | None:
    forms = [ev.int_form(s) for s in sides]
    for i in (0, 1):
        f, g = forms[i], forms[1 - i]
        if f is None or g is None or f.single() != SIZE or g.symbolic:
            continue
        left = op if i == 0 else _MIRROR[op]
        if left not in _LEFT:
            return None
        kind, delta = _LEFT[left]
        bound = g.const + delta
        what = "checks it" if kind == "size" else "bounds it"
        return OrderConstraint(kind, (), f"a static_assert {what} ({left} {g.const})",
                               location(stmt), bound)
    return None


__all__ = ["static_assert_size"]
