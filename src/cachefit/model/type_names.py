"""The one spelling of a type name that every stage compares and stores, and its variants.

Users, compilers and debug information spell the same type differently: `ring<int, 16>`
(libclang, DWARF), `ring<int,16>` (the user), `struct item` / `item`, `::ns::tcb` /
`ns::tcb`, `node_base<struct ns::list_node>` (clang's record-layout dump). `type_key` maps all
of them to one key: no `struct`/`class`/`union`/`enum` keyword (in front or before a template
argument), no whitespace, no leading `::`. It is the spelling the tracing runtime records
(runtime/src/cf_core.c, `cf_normalize`), so it is also how the profile, the layout plan and
the build summary name a traced type; `[trace] types` are read through it.

The variants differ from it only where a real input needs it:

* `unqualified_type_key`: also without leading `const`/`volatile`. libclang's spelling of a
  canonical type keeps them (`const tcb` behind a `const tcb &`); flattening looks classes
  of the hierarchy up by it.
* `without_kind_keywords`: the kind keywords gone, the spacing kept: a name as a type
  spelling writes it, for showing (the layout dump's base `ns::node_base<ns::list_node>`).
* `loose_type_key`: gcc's base-type words read as clang's (`long unsigned int` = `unsigned
  long`, `unsigned int` = `unsigned`) and integer suffixes dropped (`ring<int, 16u>`): DWARF
  from gcc names template instances so; the DWARF reader tries it when `type_key` finds none.

The definition keys (issue 27, below): `dict@deps/hiredis/dict.h:55` names one of several
records a program calls `dict`; `split_definition`, `definition_name` and
`definition_matches` (whether a file and line a compiler names is that place) spell and
compare them, `traced_as` finds a `[trace] types` entry's keys among a profile's types.

This module only spells names; it never decides which record a name means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_KEYWORDS = ("struct", "class", "union", "enum")
# a kind keyword before a template (or function) argument: `<struct x`, `, class y`
_INNER_KIND = re.compile(r"(?<=[<,(])(\s?)(?:struct|class|union|enum)\s")
_CV = re.compile(r"^(?:(?:const|volatile)\s+)+")

# gcc spells base types "long unsigned int"; clang (and the libclang front end) "unsigned long".
_GCC_TYPE_WORDS = [
    (re.compile(r"\blong long unsigned int\b"), "unsigned long long"),
    (re.compile(r"\blong long int\b"), "long long"),
    (re.compile(r"\blong unsigned int\b"), "unsigned long"),
    (re.compile(r"\blong int\b"), "long"),
    (re.compile(r"\bshort unsigned int\b"), "unsigned short"),
    (re.compile(r"\bshort int\b"), "short"),
    (re.compile(r"\b__int128 unsigned\b"), "unsigned __int128"),
    (re.compile(r"\bcomplex (float|double|long double)\b"), r"_Complex \1"),
]
_INT_SUFFIX = re.compile(r"\b(\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b")


def without_kind_keywords(name: str) -> str:
    """`name` without its leading kind keyword and those before template arguments, spacing
    kept (`struct ns::node_base<struct ns::list_node>` -> `ns::node_base<ns::list_node>`)."""
    name = name.strip()
    for kw in _KEYWORDS:
        if name.startswith(kw) and name[len(kw):len(kw) + 1].isspace():
            name = name[len(kw):].lstrip()
            break
    return _INNER_KIND.sub(lambda m: m.group(1), name)


def type_key(name: str) -> str:
    """`name` as the key described in the module docstring (`ring<int,16>`)."""
    return "".join(without_kind_keywords(name).split()).removeprefix("::")


def unqualified_type_key(name: str) -> str:
    """`type_key` of `name` without its leading `const`/`volatile` (`const tcb` -> `tcb`)."""
    return type_key(_CV.sub("", name.strip()))


def clang_type_words(name: str) -> str:
    """gcc's spellings of base types inside `name` replaced by clang's (`long int` ->
    `long`), spacing otherwise kept."""
    for pattern, repl in _GCC_TYPE_WORDS:
        name = pattern.sub(repl, name)
    return name


def loose_type_key(name: str) -> str:
    """A key blind to how gcc and clang spell base types: `clang_type_words`, no
    integer suffixes, `unsigned int` = `unsigned`, then `type_key`."""
    name = _INT_SUFFIX.sub(r"\1", clang_type_words(name))
    name = re.sub(r"\bunsigned int\b", "unsigned", name)
    return type_key(name)


def key_matches(entry: str, wanted: str, key: Callable[[str], str] = type_key) -> bool:
    """Whether the record name `entry` (qualified or not) is what `wanted` names: the same
    key, or `wanted` is a trailing part of its scopes (`tcb` names `ns::tcb`)."""
    e, w = key(entry), key(wanted)
    return e == w or e.endswith("::" + w)


# ---------------------------------------------------------------- definition keys (issue 27)
#
# Two records with one name in one program (a library's `struct dict` beside the program's)
# are two traced types. Each is named `NAME@WHERE`: WHERE is the definition's place,
# `path/to/file.h:LINE` (the line of the record's name; the path relative to the project
# when inside it), or a layout fingerprint (eight hex digits) in what the instrumented code
# registers. A user may write `NAME@path` (any definition of NAME in that file) or
# `NAME@path:LINE` in `[trace] types`. A name without `@` is a plain type name.

DEFINITION_MARK = "@"


def split_definition(name: str) -> tuple[str, str | None]:
    """`dict@deps/dict.h:55` -> (`dict`, `deps/dict.h:55`); a plain name -> (name, None)."""
    base, mark, where = name.partition(DEFINITION_MARK)
    return (base, where) if mark and where else (name, None)


def plain_type_name(name: str) -> str:
    """The type name without its definition (`dict@deps/dict.h:55` -> `dict`)."""
    return split_definition(name)[0]


def definition_name(name: str, path: str, line: int) -> str:
    """The readable key of one definition of `name`: `name@path:line`."""
    return f"{name}{DEFINITION_MARK}{path}:{line}"


def _where(where: str) -> tuple[str, int | None]:
    path, colon, line = where.rpartition(":")
    if colon and line.isdigit():
        return path, int(line)
    return where, None


def definition_matches(where: str, file: str, line: int, cwd: str | None = None) -> bool:
    """Whether a definition at `file`:`line` (`file` as a compiler or a line marker names it,
    relative to `cwd` or the current directory) is the one `where` (`path` or `path:LINE`,
    the part after `@`) names: the same line when `where` has one, and `file`'s absolute
    path equal to `path` or ending in `/path` (a path relative to the project names the
    file from any build directory)."""
    import os
    path, want_line = _where(where)
    if want_line is not None and want_line != line:
        return False
    if not path or not file:
        return False
    full = os.path.normpath(os.path.join(cwd or os.getcwd(), file))
    want = os.path.normpath(path)
    if os.path.isabs(want):
        return full == want
    parts = want.split("/")
    while parts and parts[0] in (".", ".."):
        parts.pop(0)
    return bool(parts) and full.endswith("/" + "/".join(parts))


def traced_as(entry: str, keys: Iterable[str]) -> list[str]:
    """The types of a profile (`keys`) that the `[trace] types` entry `entry` became: the
    entry itself when present, else each definition of it (`dict` -> `dict@a.h:4`,
    `dict@b.h:3`), in the order of `keys`."""
    keys = list(keys)
    if entry in keys:
        return [entry]
    return [k for k in keys if split_definition(k)[1] is not None
            and split_definition(k)[0] == entry]
