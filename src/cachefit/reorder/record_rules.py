"""What the record's own definition says about reordering it.

Refusals: a packed record (`packed` attribute, or `#pragma pack` seen in the compiler's
layout: the record aligned below a member's alignment, or a member at an offset that is not
a multiple of its alignment), bit-fields with `packed`/`aligned` attributes, members whose
`aligned` value is not a literal (the model could not know their alignment), a record
listed as ABI in `cachefit.toml`, preprocessor conditionals that may change which data
members exist (member_conditionals), `#include` or `#pragma` in the member list (use the
build-time mode, which works on preprocessed code), and what the
member reader could not represent. Members with their own `packed` or literal `aligned(N)`
attribute are not refused: the front end reports the alignment they really have and the
model places them with it.

Constraints: fields declared by one macro expansion, by one anonymous struct or by one
declaration that defines a type stay together in their order (a macro header that
other records share is handled by code_scan); zero-size marker fields (`char
cacheline_group_begin[0]`) are group boundaries every field stays on its side of; a
one-element array declared last (`char key[1]`, the pre-C99 "struct hack" for a
variable-length tail, as in leveldb's LRUHandle) stays last, like a flexible array
member; a `#define` or `#undef` between members (libevent's `#define NUM_ERRORS 3` right
before `uint32_t errors[NUM_ERRORS]`) is a boundary no member moves across (the rewriter
keeps it between the same members). Reads the definition only; never edits.
"""

from __future__ import annotations

from collections.abc import Sequence

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.clang_records import explicit_alignment
from cachefit.frontend.clang_util import CK, children, kind_of, location
from cachefit.frontend.member_units import MACRO_DIRECTIVES, Directive, RecordBody
from cachefit.model import Record
from cachefit.model.project_config import ReorderConfig
from cachefit.reorder.constraints import OrderConstraint, Refusal
from cachefit.reorder.implicit_pack import has_implicit_layout_attribute
from cachefit.reorder.member_conditionals import conditional_refusal


def record_refusals(decl: ci.Cursor, record: Record, body: RecordBody, config: ReorderConfig,
                    asked_name: str, build_time: bool,
                    unit: tuple[str, Sequence[str]] | None = None) -> list[Refusal]:
    """Everything in the definition that rules reordering out (see the module doc);
    `unit` (path, args) lets a `#pragma pack` hidden from the layout be asked for."""
    out = packing_refusals(decl, record, unit)
    if config.is_abi(record.name, asked_name):
        out.append(Refusal(f"{record.name} is listed as ABI in {config.path}",
                           "remove it from [reorder] abi to allow reordering",
                           Location(config.path or "cachefit.toml")))
    if not build_time:
        conditional = conditional_refusal(decl, body, record.name)
        if conditional is not None:
            out.append(conditional)
        for d in body.directives:
            if d.name in ("include", "pragma", "import"):
                out.append(Refusal(
                    f"the member list of {record.name} has #{d.name}",
                    "use the build-time mode (reorder the preprocessed unit)", d.location))
                break
    for what, where in body.problems:
        out.append(Refusal(what, "use the build-time mode (reorder the preprocessed unit)",
                           where))
    return out


def packing_refusals(decl: ci.Cursor, record: Record,
                     unit: tuple[str, Sequence[str]] | None = None) -> list[Refusal]:
    """A packed record, a `#pragma pack` in effect, and member attributes the model cannot
    place (see the module doc). The pragma leaves no attribute libclang exposes in a normal
    parse; its effect on the compiler's layout is what is checked (a pack that changes
    nothing is allowed: it cannot change anything in another order either). Only a
    record-level `aligned` attribute can hide a pack that matters from the layout: then
    the unit is parsed again to see the implicit attribute (implicit_pack)."""
    out: list[Refusal] = []
    loc = location(decl)
    record_attrs = {kind_of(c) for c in children(decl)}
    if CK.PACKED_ATTR in record_attrs:
        out.append(Refusal(f"{record.name} is packed; its layout is fixed on purpose",
                           "remove the packed attribute if the layout is not an ABI", loc))
    else:
        capped = next((f for f in record.fields if f.align > record.align), None)
        shifted = next((f for f in record.fields if not f.is_bitfield and f.align > 1
                        and f.offset % f.align), None)
        why = (f"member {capped.name} needs alignment {capped.align} but the record is "
               f"aligned to {record.align}" if capped is not None else
               f"member {shifted.name} (alignment {shifted.align}) is at offset "
               f"{shifted.offset}" if shifted is not None else None)
        if why is None and CK.ALIGNED_ATTR in record_attrs and unit is not None and \
                has_implicit_layout_attribute(unit[0], unit[1], decl.get_usr()):
            why = "the record's aligned attribute hides it in the layout"
        if why is not None:
            out.append(Refusal(f"{record.name} is packed (#pragma pack: {why}); its layout "
                               "is fixed on purpose", "remove the #pragma pack around it if "
                               "the layout is not an ABI", loc))
    for fc in children(decl):
        if kind_of(fc) != CK.FIELD_DECL:
            continue
        member_attrs = {kind_of(c) for c in children(fc)}
        name = fc.spelling or "an unnamed bit-field"
        if fc.is_bitfield() and member_attrs & {CK.PACKED_ATTR, CK.ALIGNED_ATTR}:
            out.append(Refusal(f"bit-field {name} of {record.name} has a packed or aligned "
                               "attribute; where the compiler puts such a bit-field is not "
                               "modelled", "remove the attribute, or reorder by hand",
                               location(fc)))
        elif CK.ALIGNED_ATTR in member_attrs and explicit_alignment(fc) == 0:
            out.append(Refusal(f"the alignment of member {name} of {record.name} is not a "
                               "number cachefit can read (aligned attribute without a "
                               "literal value)", "write the alignment as a literal, e.g. "
                               "aligned(16), or reorder by hand", location(fc)))
    return out


def record_constraints(record: Record, body: RecordBody) -> list[OrderConstraint]:
    out: list[OrderConstraint] = []
    for u in body.units:
        if len(u.fields) < 2:
            continue
        if u.kind == "macro":
            out.append(OrderConstraint("unit", u.fields,
                                       f"declared by one expansion of macro {u.macro}",
                                       u.location))
        elif u.kind == "anonymous":
            out.append(OrderConstraint("unit", u.fields, "members of one anonymous "
                                       "struct/union", u.location))
        elif not u.splittable and u.declarators == () and u.specifier is None:
            out.append(OrderConstraint("unit", u.fields, "one declaration that cannot be "
                                       "split", u.location))
        elif not u.splittable:
            out.append(OrderConstraint("unit", u.fields, "one declaration that defines a "
                                       "type and cannot be split", u.location))
    last = record.fields[-1].name if record.fields else None
    tail = record.fields[-1] if record.fields else None
    if tail is not None and not tail.is_bitfield and tail.type.replace(" ", "").endswith("[1]"):
        unit = next((u for u in body.units if tail.name in u.fields), None)
        out.append(OrderConstraint("same_side", (), "a one-element array last in the "
                                   "record: the pre-C99 variable-length tail (struct hack) "
                                   "is used past sizeof, so it stays last",
                                   unit.location if unit else None, tail.name))
    out += _directive_boundaries(body)
    for f in record.fields:
        if f.size == 0 and not f.is_bitfield and f.name != last:
            unit = next((u for u in body.units if f.name in u.fields), None)
            out.append(OrderConstraint("same_side", (), "zero-size marker field: the "
                                       "fields around it keep their side",
                                       unit.location if unit else None, f.name))
    return out


def _directive_boundaries(body: RecordBody) -> list[OrderConstraint]:
    """No member moves across a `#define`/`#undef` between members: every member after it
    stays after every member before it. As `same_side` rules, one per member of the
    smaller side (the boundary) over the members of the other side; directives with no
    member between them make one boundary."""
    out: list[OrderConstraint] = []
    groups: dict[tuple[str, ...], list[Directive]] = {}
    for d in body.directives:
        before, after = body.fields_across(d)
        if d.name in MACRO_DIRECTIVES and before and after:
            groups.setdefault(tuple(before), []).append(d)
    for before_t, ds in groups.items():
        before = list(before_t)
        after = [n for n in body.field_names() if n not in before_t]
        what = ", ".join(f"#{d.name} {d.argument}" for d in ds)
        reason = (f"{what} in the member list: the members after it may use the macro, so "
                  "no member moves across it")
        sides = [(b, after) for b in before] if len(before) <= len(after) else \
            [(a, before) for a in after]
        out += [OrderConstraint("same_side", tuple(fields), reason, ds[0].location, boundary)
                for boundary, fields in sides]
    return out
