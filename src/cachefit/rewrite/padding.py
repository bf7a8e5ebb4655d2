"""The declaration of the padding members a layout plan asks for (issue 30).

A plan's `RecordPlan.padding` names fields and a byte count; the rewritten declaration
declares `char __cachefit_pad_<field>[N];` right before each of them (with
`__attribute__((unused))` when it is private), so that the field starts on another line
than what the layout stage keeps it away from. This module holds
the member's declaration and the check of a padding map against an order (the name and the
member list a planned record declares: cachefit.model.padding_members). It edits no text
(cachefit.rewrite.member_order places the members).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cachefit.errors import Location, UserError
from cachefit.model.padding_members import is_pad_member, pad_member


def pad_declaration(field: str, size: int, private: bool = False) -> bytes:
    """The declaration of the `size` bytes of padding before `field` (no indentation); a
    `private` one (C++) is marked unused, which clang's -Wunused-private-field (an error
    under -Werror) asks of a private member no code names."""
    unused = " __attribute__((unused))" if private else ""
    return f"char {pad_member(field)}[{size}]{unused};".encode()


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
