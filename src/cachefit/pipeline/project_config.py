"""The project file `cachefit.toml`: build mode, real compilers and tracing options.

Found through CACHEFIT_CONFIG, else in the current directory or the nearest parent
directory that has one (docs/cachefit-toml.md). CACHEFIT_MODE, CACHEFIT_CC and
CACHEFIT_CXX override the file (CACHEFIT_LAYOUTS overrides `[build] layouts`). Every
stage reads the file through `read_project_text` and `parse_toml`, which reject a table or
key that no stage reads (TABLES; SUBTABLES: [trace.qemu] and its arrays of tables). Every
error about a value is located at the value (`value_place`: `cachefit.toml:LINE:COL:`). This
module validates the values of the settings the build wrapper and tracer use ([build] and
[trace]); other stages validate theirs ([trace.qemu]: cachefit.trace.qemu_backend), and
other sections are kept untouched in `sections`. It never runs a compiler.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cachefit.errors import Location, UserError
from cachefit.model.type_names import type_key

CONFIG_NAME = "cachefit.toml"
Mode = Literal["plain", "profile", "optimize"]
MODES: tuple[Mode, ...] = ("plain", "profile", "optimize")
Backend = Literal["auto", "sanitizer-coverage", "tsan"]
BACKENDS: tuple[Backend, ...] = ("auto", "sanitizer-coverage", "tsan")

_TRACE_KEYS = {"types", "entry", "instrument", "instrument_files", "max_accesses",
               "max_objects", "max_sequences", "max_distinct", "allocators", "deallocators",
               "backend", "cache_line"}
# Every table of the project file and every key (or sub-table) some stage reads; anything
# else is a typo and an error (`check_names`). [trace]: the compile-time tracer (here) and
# the QEMU backend's sub-table (cachefit.trace.qemu_backend, docs/qemu-tracing.md).
# [build]: the compiler wrapper (here) and `cachefit build` (cachefit.pipeline.pipeline_config).
# [reorder] and [layout]: cachefit.reorder.project_config.
TABLES: dict[str, frozenset[str]] = {
    "trace": frozenset(_TRACE_KEYS | {"qemu"}),
    "build": frozenset({"mode", "cc", "cxx", "layouts",
                        "command", "workload", "clean", "flatten", "output", "binaries",
                        "object_align", "time_limit", "march_native", "lto", "pgo",
                        "retrace"}),
    "reorder": frozenset({"abi"}),
    "layout": frozenset({"entry_weights"}),
}
# Sub-tables, by their dotted name, with their keys: [trace.qemu] and the entries of its
# arrays of tables (ARRAYS: [[trace.qemu.object]], [[trace.qemu.area]], input = [{...}]).
SUBTABLES: dict[str, frozenset[str]] = {
    "trace.qemu": frozenset({"types", "entry", "kernel", "binary", "kernel_range",
                             "phase_start", "phase_end", "phase_elf", "traced_code",
                             "auto_objects", "max_accesses", "max_objects", "max_sequences",
                             "overhead", "timeout", "log", "stop_after", "input", "object",
                             "area"}),
    "trace.qemu.object": frozenset({"symbol", "address", "type", "extent"}),
    "trace.qemu.area": frozenset({"type", "base", "stride", "count", "end"}),
    "trace.qemu.input": frozenset({"after", "send"}),
}
ARRAYS = frozenset({"trace.qemu.object", "trace.qemu.area", "trace.qemu.input"})
# How an entry of an array of tables is named in messages: input is written inline.
_ARRAY_NAMES = {"trace.qemu.input": "input of [trace.qemu]"}


@dataclass(frozen=True)
class TraceConfig:
    """The [trace] table: what to trace and how."""

    types: tuple[str, ...] = ()
    entry: tuple[str, ...] = ()
    # Functions to instrument (clang allowlist `fun:` patterns); None = every function.
    instrument: tuple[str, ...] | None = None
    # Source files to instrument (clang allowlist `src:` patterns).
    instrument_files: tuple[str, ...] = ("*",)
    max_accesses: int = 4096
    max_objects: int = 64
    max_sequences: int = 1_000_000
    # Distinct accesses kept per summary of a long invocation (the runtime's guard).
    max_distinct: int = 65536
    allocators: tuple[str, ...] = ()
    deallocators: tuple[str, ...] = ()
    backend: Backend = "auto"
    cache_line: int = 64


@dataclass(frozen=True)
class BuildConfig:
    """The [build] table: mode and the real compilers."""

    mode: Mode | None = None
    cc: str | None = None
    cxx: str | None = None
    # The layout plan of optimize builds (docs/layout-plan.md), relative to the project file.
    layouts: str | None = None


@dataclass(frozen=True)
class ProjectConfig:
    """A parsed project file (or the defaults when there is none); `raw` is the whole
    decoded TOML, for backends that read their own tables."""

    path: Path | None
    trace: TraceConfig = field(default_factory=TraceConfig)
    build: BuildConfig = field(default_factory=BuildConfig)
    sections: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    """The file's text, to locate a bad value (`value_place`)."""


def value_error(text: str, path: Path, table: str, key: str, what: str,
                fix: str = "see docs/cachefit-toml.md") -> UserError:
    """`what` is wrong with the value of `key` in [table]: located at that value (at the
    table's header when the key is not written)."""
    return UserError(f"[{table}] {key} {what}", fix, value_place(text, path, table, key))


def _names(text: str, path: Path, table: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise value_error(text, path, table, key, "must be a list of names")
    return tuple(v.strip() for v in value)


def _positive(text: str, path: Path, key: str, value: Any, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise value_error(text, path, "trace", key, f"must be an integer from 1 to {limit}")
    return value


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
            raise value_error(path, f"invalid TOML: {exc}") from exc
        raise UserError(f"invalid TOML: {str(exc)[:where.start()].strip()}",
                        "see docs/cachefit-toml.md",
                        Location(str(path), int(where[1]), int(where[2]))) from exc
    check_names(data, text, path)
    return data


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


def parse_config(text: str, path: Path) -> ProjectConfig:
    """Parse and validate the TOML text of a project file."""
    data = parse_toml(text, path)
    trace_raw = data.get("trace", {})
    build_raw = data.get("build", {})
    kw: dict[str, Any] = {}
    for key in ("types", "entry", "allocators", "deallocators", "instrument_files"):
        if key in trace_raw:
            kw[key] = _names(text, path, "trace", key, trace_raw[key])
    if "types" in kw:     # one spelling everywhere: `ring<int, 16>` is `ring<int,16>`
        kw["types"] = tuple(dict.fromkeys(type_key(t) for t in kw["types"]))
    if "instrument" in trace_raw:
        inst = trace_raw["instrument"]
        kw["instrument"] = None if inst == "all" else \
            _names(text, path, "trace", "instrument", inst)
    for key, limit in (("max_accesses", 1 << 24), ("max_objects", 32767),
                       ("max_sequences", 1 << 40), ("max_distinct", 1 << 24),
                       ("cache_line", 4096)):
        if key in trace_raw:
            kw[key] = _positive(text, path, key, trace_raw[key], limit)
    if "backend" in trace_raw:
        if trace_raw["backend"] not in BACKENDS:
            raise value_error(text, path, "trace", "backend",
                              f"must be one of {', '.join(BACKENDS)}")
        kw["backend"] = trace_raw["backend"]
    bkw: dict[str, Any] = {}
    if "mode" in build_raw:
        if build_raw["mode"] not in MODES:
            raise value_error(text, path, "build", "mode", f"must be one of {', '.join(MODES)}")
        bkw["mode"] = build_raw["mode"]
    for key in ("cc", "cxx"):
        if key in build_raw:
            if not isinstance(build_raw[key], str) or not build_raw[key].strip():
                raise value_error(text, path, "build", key, "must be a compiler command")
            bkw[key] = build_raw[key].strip()
    if "layouts" in build_raw:
        if not isinstance(build_raw["layouts"], str) or not build_raw["layouts"].strip():
            raise value_error(text, path, "build", "layouts", "must be the path of a layout plan")
        bkw["layouts"] = build_raw["layouts"].strip()
    sections = {k: v for k, v in data.items() if k not in ("trace", "build")}
    return ProjectConfig(path=path, trace=TraceConfig(**kw), build=BuildConfig(**bkw),
                         sections=sections, raw=data, text=text)


def find_config(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """CACHEFIT_CONFIG, else cachefit.toml in `cwd` or its nearest parent that has one."""
    env = os.environ if env is None else env
    named = env.get("CACHEFIT_CONFIG")
    if named:
        p = Path(named)
        if not p.is_file():
            raise UserError(f"CACHEFIT_CONFIG names {named}, which is not a file",
                            "point it at a cachefit.toml or unset it")
        return p.resolve()
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def load_config(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> ProjectConfig:
    """The project's configuration, or the defaults when no project file exists."""
    path = find_config(env, cwd)
    if path is None:
        return ProjectConfig(path=None)
    return parse_config(read_project_text(path), path)


def effective_mode(config: ProjectConfig, env: Mapping[str, str] | None = None) -> Mode:
    """CACHEFIT_MODE, else [build] mode, else plain."""
    env = os.environ if env is None else env
    value = env.get("CACHEFIT_MODE")
    if value:
        if value not in MODES:
            raise UserError(f"CACHEFIT_MODE={value} is not a mode",
                            f"use one of {', '.join(MODES)}")
        return value  # type: ignore[return-value]
    return config.build.mode or "plain"


def real_compiler(config: ProjectConfig, language: Literal["c", "c++"],
                  env: Mapping[str, str] | None = None) -> list[str]:
    """The real compiler command (split on spaces, so `ccache gcc` works)."""
    env = os.environ if env is None else env
    if language == "c":
        chosen = env.get("CACHEFIT_CC") or config.build.cc or "cc"
    else:
        chosen = env.get("CACHEFIT_CXX") or config.build.cxx or "c++"
    return chosen.split()
