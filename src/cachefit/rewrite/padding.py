"""The padding members a layout plan asks for (issue 30) and their one spelling.

A plan's `RecordPlan.padding` names fields and a byte count; the rewritten declaration
declares `char __cachefit_pad_<field>[N];` right before each of them (with
`__attribute__((unused))` when it is private), so that the field
starts on another line than what the layout stage keeps it away from. This module holds
the member's name and text, the member list a rewritten record declares (its fields with
the pads in place), and the check of a padding map against an order. It edits no text
(cachefit.rewrite.member_order places the members) and reads no DWARF (the build's layout
checks compare what they read with `declared_members`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cachefit.errors import Location, UserError

PAD_PREFIX = "__cachefit_pad_"
"""Every padding member's name starts with this; the padded field's name follows."""


def pad_member(field: str) -> str:
    """The name of the padding member declared right before `field`."""
    return PAD_PREFIX + field


def is_pad_member(name: str) -> bool:
    """Whether `name` is a padding member cachefit declared."""
    return name.startswith(PAD_PREFIX)


def pad_declaration(field: str, size: int, private: bool = False) -> bytes:
    """The declaration of the `size` bytes of padding before `field` (no indentation); a
    `private` one (C++) is marked unused, which clang's -Wunused-private-field (an error
    under -Werror) asks of a private member no code names."""
    unused = " __attribute__((unused))" if private else ""
    return f"char {pad_member(field)}[{size}]{unused};".encode()


def declared_members(order: Sequence[str], padding: Mapping[str, int] | None
                     ) -> tuple[str, ...]:
    """The data members a record rewritten to `order` with `padding` declares, in order:
    each padded field preceded by its padding member."""
    pads = padding or {}
    out: list[str] = []
    for name in order:
        if name in pads:
            out.append(pad_member(name))
        out.append(name)
    return tuple(out)


def check_padding(padding: Mapping[str, int], order: Sequence[str],
                  where: Location | None = None) -> None:
    """Raise UserError unless every padded field is in `order` with at least one byte and no
    field of `order` already has a padding member's name."""
    fields = set(order)
    for name, size in padding.items():
        if name not in fields:
            raise UserError(f"the layout plan pads before {name}, which is not a field of "
                            "the record", "see docs/layout-plan.md", where)
        if size < 1:
            raise UserError(f"the layout plan pads {size} bytes before {name}; padding is "
                            "at least 1 byte", "see docs/layout-plan.md", where)
    taken = [n for n in order if is_pad_member(n)]
    if padding and taken:
        raise UserError(f"the record has a field named {taken[0]}, the name of cachefit's "
                        "padding members", "rename the field or drop the plan's padding", where)
