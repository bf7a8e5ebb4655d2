"""The padding members of a layout plan's records (issue 30): their one spelling.

A plan's `RecordPlan.padding` names fields and byte counts; an optimize build declares
`char __cachefit_pad_<field>[N];` right before each such field (cachefit.rewrite writes it),
so the compiler's layout of the record (libclang, DWARF) has these members too. This
module holds the name and the member list a planned record declares, for every stage that
writes or reads such a layout; it computes no offsets and edits no text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

PAD_PREFIX = "__cachefit_pad_"
"""Every padding member's name starts with this; the padded field's name follows."""


def pad_member(field: str) -> str:
    """The name of the padding member declared right before `field`."""
    return PAD_PREFIX + field


def is_pad_member(name: str) -> bool:
    """Whether `name` is a padding member cachefit declared."""
    return name.startswith(PAD_PREFIX)


def padded_field(name: str) -> str | None:
    """The field a padding member's `name` stands before; None for other names."""
    return name[len(PAD_PREFIX):] if is_pad_member(name) else None


def declared_members(order: Sequence[str], padding: Mapping[str, int] | None
                     ) -> tuple[str, ...]:
    """The data members a record declared in `order` with `padding` has, in order: each
    padded field preceded by its padding member."""
    pads = padding or {}
    out: list[str] = []
    for name in order:
        if name in pads:
            out.append(pad_member(name))
        out.append(name)
    return tuple(out)
