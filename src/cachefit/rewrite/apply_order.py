"""Apply a member order to a record's source and verify it: the one rewrite of cachefit.

`apply_order(analysis, order, ...)` computes the whole edit list (the member list in the
new order, with relaxed-alignment attributes, zero-width bit-field barriers and padding
members; constructor initialiser lists kept in declaration order; with `fix_initializers`,
the record's positional initialisers made designated), applies it at once to the files'
current bytes, re-parses the defining unit with the new text and checks the compiler's
layout: the constraints' pins and asserted sizes, the intended order, alignment, sizeof
and offsets when predicted (layout_check), byte boundaries the code relies on, and, when
asked, that every unit of the analysis still compiles (units_compile). `cachefit reorder`
and the optimize build's wrapper both call it.

It decides nothing (cachefit.reorder.decide chose the order and its figures) and writes
nothing: it returns the new file contents, which the caller writes or compiles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cachefit.edits import Edit, EditList
from cachefit.errors import UnsafeTransformation
from cachefit.frontend.ctor_init_lists import reorder_list
from cachefit.model import Record
from cachefit.model.padding_members import declared_members
from cachefit.reorder.analysis import Analysis
from cachefit.reorder.constraints import OrderConstraint, layout_violation
from cachefit.rewrite.initializers import fix_site, is_cxx20
from cachefit.rewrite.layout_check import Expectation, check_layout, reparse_record
from cachefit.rewrite.member_order import rewrite_members
from cachefit.rewrite.units_compile import check_units_compile


@dataclass
class AppliedOrder:
    """The verified new text of the files an order changes (nothing is written yet)."""

    originals: dict[str, bytes]
    contents: dict[str, bytes]          # file -> new bytes (empty: nothing changed)
    after: Record                       # the compiler's layout of the rewritten record
    order: tuple[str, ...]              # the fields as the new text declares them
    split: tuple[str, ...] = ()         # first field of each declaration that was split
    initializers_fixed: int = 0
    # Files changed only to keep constructor initialiser lists in declaration order.
    cosmetic_files: list[str] = field(default_factory=list)

    def text_of(self, path: str) -> bytes:
        """The bytes of `path` after the change (its original bytes when unchanged)."""
        return self.contents.get(path, self.originals[path])


def apply_order(a: Analysis, order: Sequence[str], *,
                attributes: Mapping[str, str] | None = None,
                barriers: Mapping[str, str] | None = None,
                padding: Mapping[str, int] | None = None,
                fix_initializers: bool = False,
                expected_size: int | None = None,
                predicted_offsets: Mapping[str, int] | None = None,
                pins: Mapping[str, int] | None = None,
                relaxed: Mapping[str, int] | None = None,
                byte_boundaries: bool = True,
                compile_units: bool = False,
                stage: Callable[[str], None] | None = None) -> AppliedOrder:
    """Declare `a`'s record's fields in `order` and verify the result (see the module doc).

    `expected_size`, `predicted_offsets` (used when the new text declares exactly `order`),
    `pins` and `relaxed` are what the compiler's layout must show; `byte_boundaries` checks
    the constraints' byte boundaries, `compile_units` compiles every unit of `a` with the
    new text. `padding` (field -> bytes) declares a padding member before each such field
    (cachefit.rewrite.padding); the compiler's layout must then show those members, and
    `expected_size` includes them. Raises `UnsafeTransformation` (nothing to write) when a
    check fails. `stage` is told the stage starting ("rewriting", ...), for a display.
    """
    say = stage or (lambda _what: None)
    rec, body = a.record, a.body
    say("rewriting")
    pads = dict(padding or {})
    mr = rewrite_members(body, list(order), dict(attributes or {}), dict(barriers or {}),
                         pads)
    edits = EditList()
    for b, e, piece in mr.edits:
        edits.add(Edit(body.file, b, e, piece.decode("utf-8", errors="surrogateescape"),
                       "member order"))
    originals: dict[str, bytes] = {body.file: body.text}

    def read(path: str) -> bytes:
        if path not in originals:
            with open(path, "rb") as fh:
                originals[path] = fh.read()
        return originals[path]

    fixed = 0
    if fix_initializers:
        cxx20 = any(is_cxx20(args) for _, args in a.units)
        for site in a.init_sites:
            edits.extend(fix_site(site, list(mr.effective_order), read, cxx20))
            fixed += 1
    cosmetic: set[str] = set()
    semantic = set(edits.files())
    for lst in a.ctor_lists:    # no -Wreorder in the rewritten code
        more = reorder_list(lst, mr.effective_order, read(lst.file))
        edits.extend(more)
        cosmetic |= {e.file for e in more}
    for f in edits.files():
        read(f)
    contents = edits.apply(originals) if len(edits) else {}

    path, args = a.unit
    where = body.units[0].location if body.units else None
    after = reparse_record(path, args, a.type_name, contents, where)
    broken = layout_violation(a.constraints, rec, {f.name: f.offset for f in after.fields},
                              after.size)   # pins, asserted sizes
    if broken is not None:
        raise broken
    expect = Expectation(order=declared_members(mr.effective_order, pads),
                         size=expected_size, offsets=predicted_offsets
                         if tuple(order) == mr.effective_order else None,
                         pins=pins, relaxed=relaxed)
    check_layout(rec, after, expect, where)
    if byte_boundaries:
        _check_byte_boundaries(rec, after, a.constraints)
    if compile_units:
        n = len(a.units)
        say(f"compile check of {n} unit{'' if n == 1 else 's'}")
        # every unit must still compile with the new text (the defining one was re-parsed)
        check_units_compile(a.units, a.unit, contents, a.unit_files, a.scan_options.jobs,
                            a.scan_options.open_cache())
    return AppliedOrder(originals, contents, after, mr.effective_order, mr.split, fixed,
                        sorted(cosmetic - semantic))


def _check_byte_boundaries(before: Record, after: Record,
                           constraints: list[OrderConstraint]) -> None:
    old = {f.name: f for f in before.fields}
    new = {f.name: f for f in after.fields}
    for c in constraints:
        if c.kind != "same_side" or not isinstance(c.boundary, int):
            continue
        b = c.boundary
        for n in c.fields or tuple(old):
            was, now = old[n], new[n]
            if (was.end <= b) != (now.end <= b) or (was.offset >= b) != (now.offset >= b):
                raise UnsafeTransformation(
                    f"{n} moved across byte {b}, which code relies on ({c.reason})",
                    "nothing was written; keep the members of that range in place",
                    c.location)
