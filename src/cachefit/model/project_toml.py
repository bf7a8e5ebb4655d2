"""The text of the project file `cachefit.toml` as data: read, decoded and checked against
its published JSON Schema, and the places of its values in the text (docs/cachefit-toml.md).

`read_project_text` reads the file (UTF-8, a byte order mark allowed), `parse_toml` decodes
it, rejects a table or key that no stage reads (TABLES; SUBTABLES: [trace.qemu] and its
arrays of tables) with the closest known names, then checks every value against the
schema (`check_values`: the one place the value rules of [trace], [build], [reorder] and
[layout] live, with their messages). `value_place` locates a value
(`cachefit.toml:LINE:COL:`), `value_error` makes the one-line error about it and
`rule_error` the schema's own error about a key, for a rule of it the schema cannot state
(checked in code by the stage that reads the key). The typed settings are
cachefit.model.project_config's; this module knows no value's meaning.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cachefit.errors import Location, UserError
from cachefit.model.schema_check import first_error, schema

SCHEMA = "cachefit-toml.schema.json"
"""The published JSON Schema of the parsed file (cachefit/model/schemas/): every table of
the project file and every key (or sub-table) some stage reads, and the values' types.
[trace]: the compile-time tracer and the QEMU backend's sub-table
(cachefit.trace.qemu_backend, docs/qemu-tracing.md); [build]: the compiler wrapper and
`cachefit build` (cachefit.pipeline.pipeline_config); [reorder] and [layout]:
cachefit.model.project_config."""


def _tables() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]], frozenset[str]]:
    """The names of the schema: tables, sub-tables (dotted) and arrays of tables."""
    tables: dict[str, frozenset[str]] = {}
    subtables: dict[str, frozenset[str]] = {}
    arrays: set[str] = set()

    def walk(name: str, node: dict[str, Any]) -> None:
        for key, sub in node.get("properties", {}).items():
            if sub.get("type") == "array" and "properties" in sub.get("items", {}):
                arrays.add(f"{name}.{key}")
                sub = sub["items"]
            if "properties" in sub:
                subtables[f"{name}.{key}"] = frozenset(sub["properties"])
                walk(f"{name}.{key}", sub)

    for table, node in schema(SCHEMA)["properties"].items():
        tables[table] = frozenset(node["properties"])
        walk(table, node)
    return tables, subtables, frozenset(arrays)


# Anything not named in the schema is a typo and an error (`check_names`). SUBTABLES:
# [trace.qemu] and the entries of its arrays of tables (ARRAYS: [[trace.qemu.object]],
# [[trace.qemu.area]], input = [{...}]).
TABLES, SUBTABLES, ARRAYS = _tables()
# How an entry of an array of tables is named in messages: input is written inline.
_ARRAY_NAMES = {"trace.qemu.input": "input of [trace.qemu]"}
DOCS = "see docs/cachefit-toml.md"
"""What to do about a bad value when the schema names nothing more precise (`x-fix`)."""


def value_error(text: str, path: Path, table: str, key: str, what: str,
                fix: str = "see docs/cachefit-toml.md") -> UserError:
    """`what` is wrong with the value of `key` in [table]: located at that value (at the
    table's header when the key is not written)."""
    return UserError(f"[{table}] {key} {what}", fix, value_place(text, path, table, key))


def read_project_text(path: Path) -> str:
    """The text of a project file: UTF-8, with or without a byte order mark (TOML files
    are UTF-8); a UserError naming the file, or the place of the first bad byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the project file: {exc.strerror}",
                        "check its permissions", Location(str(path))) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        body, pos = data.removeprefix(b"\xef\xbb\xbf"), exc.start   # after the mark
        line = body.count(b"\n", 0, pos) + 1
        col = pos - (body.rfind(b"\n", 0, pos) + 1) + 1
        raise UserError(f"not UTF-8 text (byte 0x{body[pos]:02x})",
                        "save the file as UTF-8 (TOML files are UTF-8)",
                        Location(str(path), line, col)) from exc


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """Decode the TOML text of a project file and check its table and key names
    (`check_names`); a UserError at the place of a syntax error or unknown name."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        if where is None:
            raise UserError(f"invalid TOML: {exc}", "see docs/cachefit-toml.md",
                            Location(str(path))) from exc
        raise UserError(f"invalid TOML: {str(exc)[:where.start()].strip()}",
                        "see docs/cachefit-toml.md",
                        Location(str(path), int(where[1]), int(where[2]))) from exc
    check_names(data, text, path)
    check_values(data, text, path)
    return data


def check_values(data: Mapping[str, Any], text: str, path: Path) -> None:
    """A UserError for the first value the schema refuses (in its check order), with the
    schema's message, at the value (`value_place`). Names are `check_names`'s."""
    error = first_error(SCHEMA, data)
    if error is None:
        return
    steps = list(error.path)
    while steps and isinstance(steps[-1], int):
        steps.pop()                 # an item of a list: the place of the list
    keys = [str(k) for k in steps if not isinstance(k, int)]   # [[table]] entries
    table, key = ".".join(keys[:-1]), keys[-1] if keys else ""
    raise UserError(error.message, error.fix or DOCS, value_place(text, path, table, key))


def rule_error(text: str, path: Path, table: str, key: str) -> UserError:
    """The schema's error (`x-message`, `x-fix`) about `key` of [table], at its value: for
    a rule of that key that code checks because a schema cannot state it (a power of
    two)."""
    node = schema(SCHEMA)["properties"][table]
    fix = node.get("x-fix", DOCS)
    node = node["properties"][key]
    return UserError(node["x-message"], node.get("x-fix", fix),
                     value_place(text, path, table, key))


def check_names(data: Mapping[str, Any], text: str, path: Path) -> None:
    """A UserError for the first table or key no stage reads (TABLES, SUBTABLES), at its
    line, with the closest known names: typos must not go unnoticed. A name that must be
    a table (or an array of tables) and is not is an error too."""
    for name, value in data.items():
        if name not in TABLES:
            what = f"unknown table [{name}]" if isinstance(value, dict) else \
                f"unknown key {name} outside the tables"
            raise _unknown(what, name, TABLES, "", text, path, "[{}]")
        if not isinstance(value, dict):
            raise UserError(f"{name} must be a table ([{name}])", "see docs/cachefit-toml.md",
                            _place(text, path, "", name))
        _check_table(value, name, TABLES[name], text, path)


def _check_table(table: Mapping[str, Any], name: str, known: frozenset[str], text: str,
                 path: Path) -> None:
    """The keys of `table` (dotted `name`) against `known`; sub-tables in SUBTABLES are
    checked in turn."""
    shown = _ARRAY_NAMES.get(name, f"[[{name}]]" if name in ARRAYS else f"[{name}]")
    for key, item in table.items():
        full = f"{name}.{key}"
        if key not in known:
            if isinstance(item, dict):     # named after a sub-table if one is close
                tables = [k for k in known if f"{name}.{k}" in SUBTABLES]
                close = difflib.get_close_matches(key, tables, n=3, cutoff=0.6)
                raise _unknown(f"unknown table [{full}]", key, close or known, name, text,
                               path, f"[{name}.{{}}]")
            raise _unknown(f"unknown key {key} in {shown}", key, known, name, text, path,
                           "{}")
        if full not in SUBTABLES:
            continue
        if full in ARRAYS:
            if not isinstance(item, list) or not all(isinstance(e, dict) for e in item):
                written = "an array of inline tables ([{...}])" if full in _ARRAY_NAMES \
                    else f"an array of tables ([[{full}]])"
                raise UserError(f"[{name}] {key} must be {written}",
                                "see docs/qemu-tracing.md", _place(text, path, name, key))
            for entry in item:
                _check_table(entry, full, SUBTABLES[full], text, path)
        elif not isinstance(item, dict):
            raise UserError(f"[{name}] {key} must be a table ([{full}])",
                            "see docs/qemu-tracing.md", _place(text, path, name, key))
        else:
            _check_table(item, full, SUBTABLES[full], text, path)


def _unknown(what: str, name: str, known: Iterable[str], table: str, text: str,
             path: Path, shown: str) -> UserError:
    """`what`, with the closest of the `known` names of `table` (tables when ""), each
    written as `shown` formats it."""
    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {' or '.join(map(shown.format, close))}?"
    else:
        hint = (f"the keys of [{table}] are " if table else "the tables are ") + \
            ", ".join(map(shown.format, sorted(known)))
    return UserError(what, f"{hint} (docs/cachefit-toml.md)", _place(text, path, table, name))


def _place(text: str, path: Path, table: str, key: str) -> Location:
    """Where `key` of `table` (dotted; a top-level name when `table` is "") is written: a
    header `[table.key]`/`[table.key.sub]`, or `key = ...`/`key.sub = ...` under the
    header of `table`; else `key = ` anywhere under `table` or a table it is in (an
    inline table: `input = [{ after = "x", send = "1" }]`)."""
    current = ""
    full = f"{table}.{key}" if table else key
    key_re = re.compile(r'\s*"?(' + re.escape(key) + r')"?\s*[=.]')
    inline_re = re.compile(r'(?<![\w"-])"?(' + re.escape(key) + r')"?\s*=')
    inline: Location | None = None
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"\s*\[\[?\s*([^\]]*?)\s*\]", line)
        if header:
            current = re.sub(r'\s*\.\s*', ".", header[1]).replace('"', "")
            if current == full or current.startswith(full + "."):
                return Location(str(path), number, line.index("[") + 1)
            continue
        found = key_re.match(line)
        if found and current == table:
            return Location(str(path), number, found.start(1) + 1)
        if inline is None and (current == table or table.startswith(current + ".")):
            found = inline_re.search(line)
            if found:
                inline = Location(str(path), number, found.start(1) + 1)
    return inline or Location(str(path))


def value_place(text: str, path: Path, table: str, key: str) -> Location:
    """Where the value of `key` of `table` (dotted) is written (issue 29): the first
    character after `key =`; the key itself when it is written as a table header or a
    dotted key (`key.sub = ...`); the header of `table` when the key is not written (a key
    that is missing); else the file alone."""
    place = _place(text, path, table, key)
    if not place.line:
        return _place(text, path, "", table) if table else place
    line = text.splitlines()[place.line - 1]
    after = re.compile(r'"?' + re.escape(key) + r'"?\s*=[ \t]*').match(line, place.col - 1)
    if after is None or after.end() >= len(line):
        return place
    return Location(place.file, place.line, after.end() + 1)
