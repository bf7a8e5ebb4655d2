"""The one spelling of a type name that every stage compares and stores.

Users, compilers and debug information spell the same type differently: `ring<int, 16>`
(libclang, DWARF), `ring<int,16>` (the user), `struct item` / `item`, `::ns::tcb` /
`ns::tcb`. `type_key` maps all of them to one key: no `struct`/`class`/`union`/`enum`
keyword in front, no whitespace, no leading `::`. It is the spelling the tracing runtime
records (runtime/src/cf_core.c, `cf_normalize`), so it is also how the profile, the layout
plan and the build summary name a traced type; `[trace] types` are read through it.
"""

from __future__ import annotations

_KEYWORDS = ("struct", "class", "union", "enum")


def type_key(name: str) -> str:
    """`name` as the key described in the module docstring (`ring<int,16>`)."""
    name = name.strip()
    for kw in _KEYWORDS:
        if name.startswith(kw) and name[len(kw):len(kw) + 1].isspace():
            name = name[len(kw):]
            break
    return "".join(name.split()).removeprefix("::")


def key_matches(entry: str, wanted: str) -> bool:
    """Whether the record name `entry` (qualified or not) is what `wanted` names: the same
    key, or `wanted` is a trailing part of its scopes (`tcb` names `ns::tcb`)."""
    e, w = type_key(entry), type_key(wanted)
    return e == w or e.endswith("::" + w)
