"""Build-time mode: apply a member order to one preprocessed translation unit (`.i`/`.ii`).

The build step preprocesses each unit, calls `reorder_unit` on the result and compiles the
returned text instead, so the original sources stay untouched and member lists that depend
on the configuration (`#ifdef` in the member list) can be reordered after preprocessing.
The checks are those of the source mode restricted to the unit: refusals (packed, ABI,
raw I/O, positional initialisers unless fixed), constraints the order must honour, and the
compiler's layout of the result (order, alignment, sizeof when predicted, and the offsets
and sizes that `static_assert`s in the unit pin).
Returns the new text; writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from cachefit.edits import Edit, EditList
from cachefit.errors import Location, UserError
from cachefit.frontend.ctor_init_lists import reorder_list
from cachefit.layout import evaluate_order
from cachefit.reorder.analysis import analyse, refuse_if_needed
from cachefit.reorder.constraints import layout_violation
from cachefit.reorder.scan_pool import ScanOptions
from cachefit.rewrite.initializers import fix_site, is_cxx20
from cachefit.rewrite.layout_check import Expectation, check_layout, reparse_record
from cachefit.rewrite.member_order import rewrite_members
from cachefit.rewrite.order_choice import empty_profile_entry
from cachefit.rewrite.reorder_source import refuse_order, violations


def reorder_unit(path: str, args: Sequence[str], type_name: str, new_order: Sequence[str], *,
                 fix_initializers: bool = False,
                 expected_size: int | None = None) -> dict[str, str]:
    """The unit `path` with `type_name`'s fields declared in `new_order`: {path: new text}.

    Raises `UnsafeTransformation` (nothing to write) when the unit rules the order out.
    """
    unit = (path, list(args))
    # one preprocessed unit, whose object the build's own cache keeps: no scan cache
    a = analyse(type_name, [unit], build_time=True,
                scan_options=ScanOptions(jobs=1, cache=False))
    refuse_if_needed(a, fix_initializers)
    old = [f.name for f in a.record.fields]
    order = list(new_order)
    _same_fields(type_name, old, order, a.body.units[0].location if a.body.units else None)
    bad = violations(a.constraints, old, order)
    if bad:
        raise refuse_order(a, bad, "the order")
    # Where the compiler would pack a moved bit-field into free bits before it, the
    # placement model asks for a zero-width bit-field barrier (see cachefit.layout).
    # The placement model's prediction also shows a broken pin or asserted size before
    # the compiler would fail on the static_assert.
    walls: dict[str, str] = {}
    try:
        ev = evaluate_order(a.record, empty_profile_entry(a.record), order,
                            allow_growth=True)
    except UserError:
        pass  # not a layout the model handles: the compiler check below decides
    else:
        if list(ev.order) == order:
            walls = dict(ev.bitfield_barriers)
            broken = layout_violation(a.constraints, a.record, ev.offsets, ev.size)
            if broken is not None:
                raise broken
    mr = rewrite_members(a.body, order, barriers=walls)
    edits = EditList()
    for b, e, piece in mr.edits:
        edits.add(Edit(a.file, b, e, piece.decode("utf-8", errors="surrogateescape"),
                       "member order"))
    originals = {a.file: a.body.text}

    def read(p: str) -> bytes:
        if p not in originals:
            with open(p, "rb") as fh:
                originals[p] = fh.read()
        return originals[p]

    if fix_initializers:
        for site in a.init_sites:
            edits.extend(fix_site(site, list(mr.effective_order), read, is_cxx20(args)))
    for lst in a.ctor_lists:    # as the source mode: no -Wreorder in the rebuilt unit
        edits.extend(reorder_list(lst, mr.effective_order, read(lst.file)))
    for f in edits.files():
        read(f)
    contents = edits.apply(originals) if len(edits) else {}
    after = reparse_record(path, list(args), type_name, contents,
                           a.body.units[0].location if a.body.units else None)
    broken = layout_violation(a.constraints, a.record, {f.name: f.offset for f in after.fields},
                              after.size)   # pins, asserted sizes
    if broken is not None:
        raise broken
    check_layout(a.record, after, Expectation(order=mr.effective_order, size=expected_size),
                 a.body.units[0].location if a.body.units else None)
    new = contents.get(path, originals.get(path) or read(path))
    out = {path: new.decode("utf-8", errors="surrogateescape")}
    for f, data in contents.items():
        out[f] = data.decode("utf-8", errors="surrogateescape")
    return out


class OtherFields(UserError):
    """The unit's record of that name has other fields than the order names: another record
    with the same name (zstd's legacy decoder declares a `seqStore_t` of its own) or another
    configuration of it (an `#ifdef` member, other macros than the profile build's)."""


def _same_fields(type_name: str, declared: list[str], order: list[str],
                 where: Location | None) -> None:
    """The order must name exactly the fields this unit declares (`OtherFields` if not):
    such an order was made for another record, not mistyped."""
    lacks = [n for n in order if n not in declared]
    unlisted = [n for n in declared if n not in order]
    if not lacks and not unlisted:
        return
    what = []
    if lacks:
        what.append("the order names " + ", ".join(lacks) + ", which it does not declare")
    if unlisted:
        what.append("it declares " + ", ".join(unlisted) + ", which the order does not name")
    raise OtherFields(f"{type_name} has other fields in this unit than the order to apply "
                      f"({'; '.join(what)}): the order was chosen for another record of "
                      "that name or another configuration of it (other macros or flags)",
                      "give the order of this unit's record", where)
