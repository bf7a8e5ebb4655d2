"""What the record's own definition says about reordering it.

Refusals: a packed record (`packed` attribute or `#pragma pack`), a record listed as ABI in
`cachefit.toml`, preprocessor conditionals, `#include` or `#pragma` in the member list (use
the build-time mode, which works on preprocessed code), and what the member reader could
not represent. Constraints: fields declared by one macro expansion, by one anonymous struct
or by one declaration that defines a type stay together in their order (a macro header that
other records share is handled by code_scan); zero-size marker fields (`char
cacheline_group_begin[0]`) are group boundaries every field stays on its side of. Reads the
definition only; never edits.
"""

from __future__ import annotations

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.model import Record
from cachefit.reorder.clang_util import CK, children, kind_of, location
from cachefit.reorder.constraints import OrderConstraint, Refusal
from cachefit.reorder.project_config import ReorderConfig
from cachefit.rewrite.member_units import RecordBody

_CONDITIONALS = {"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"}


def record_refusals(decl: ci.Cursor, record: Record, body: RecordBody, config: ReorderConfig,
                    asked_name: str, build_time: bool) -> list[Refusal]:
    out: list[Refusal] = []
    loc = location(decl)
    if any(kind_of(c) == CK.PACKED_ATTR for c in children(decl)):
        out.append(Refusal(f"{record.name} is packed; its layout is fixed on purpose",
                           "remove the packed attribute if the layout is not an ABI", loc))
    elif record.fields and record.align < max(
            (max(1, f.align) for f in record.fields if not f.is_bitfield), default=1):
        out.append(Refusal(f"{record.name} is packed (#pragma pack or aligned members below "
                           "their natural alignment); its layout is fixed on purpose",
                           "remove the packing if the layout is not an ABI", loc))
    if config.is_abi(record.name, asked_name):
        out.append(Refusal(f"{record.name} is listed as ABI in {config.path}",
                           "remove it from [reorder] abi to allow reordering",
                           Location(config.path or "cachefit.toml")))
    if not build_time:
        for d in body.directives:
            if d.name in _CONDITIONALS:
                out.append(Refusal(
                    f"the member list of {record.name} has preprocessor conditionals "
                    f"(#{d.name}); which members exist depends on the configuration",
                    "use the build-time mode (reorder the preprocessed unit, see "
                    "docs/reorder.md) instead of rewriting the source", d.location))
                break
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
    for f in record.fields:
        if f.size == 0 and not f.is_bitfield and f.name != last:
            unit = next((u for u in body.units if f.name in u.fields), None)
            out.append(OrderConstraint("same_side", (), "zero-size marker field: the "
                                       "fields around it keep their side",
                                       unit.location if unit else None, f.name))
    return out
