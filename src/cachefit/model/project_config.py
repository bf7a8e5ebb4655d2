"""The project file `cachefit.toml` as typed settings: found, read and validated once.

`find_config` finds it: CACHEFIT_CONFIG, else `cachefit.toml` in the working directory or
the nearest parent directory that has one (docs/cachefit-toml.md); every stage finds it
this way. `load_config` gives the settings of the build wrapper and the tracer ([build],
[trace]: `ProjectConfig`), `load_reorder_config` those of the deciding stage ([reorder]
abi, [layout] weights: `ReorderConfig`); other sections are kept untouched in
`sections` for the stages that read them ([trace.qemu]: cachefit.trace.qemu_backend,
[build] pipeline keys: cachefit.pipeline.pipeline_config). CACHEFIT_MODE, CACHEFIT_CC and
CACHEFIT_CXX override the file (`effective_mode`, `real_compiler`). The text, unknown names,
the values' rules (the published schema) and the places of values are
cachefit.model.project_toml's: every error about a value is one line located at the
value; this module only turns checked values into settings. It never runs a compiler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cachefit.errors import UserError
from cachefit.model.project_toml import parse_toml, read_project_text
from cachefit.model.type_names import key_matches, type_key

CONFIG_NAME = "cachefit.toml"
SHARING_WEIGHT = 4.0
"""The default `[layout] sharing_weight` (and `optimize_layout`'s): a line transfer between
threads weighs as much as 4 more lines touched per operation (docs/layout.md, "Threads:
lines that change hands", says why 4)."""
Mode = Literal["plain", "profile", "optimize"]
MODES: tuple[Mode, ...] = ("plain", "profile", "optimize")
Backend = Literal["auto", "sanitizer-coverage", "tsan"]
BACKENDS: tuple[Backend, ...] = ("auto", "sanitizer-coverage", "tsan")

@dataclass(frozen=True)
class TraceConfig:
    """The [trace] table: what to trace and how."""

    types: tuple[str, ...] = ()
    entry: tuple[str, ...] = ()
    # Functions to instrument (clang allowlist `fun:` patterns); None = every function
    # (`instrument = "all"` or not set), or with `instrument_auto` (`instrument = "auto"`,
    # opt-in) every function that can touch a traced type (issue 31's static filter,
    # clang backend).
    instrument: tuple[str, ...] | None = None
    instrument_auto: bool = False
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


def names(value: str | list[str]) -> tuple[str, ...]:
    """A checked list of names (one name may be written as a string), stripped."""
    return tuple(v.strip() for v in ([value] if isinstance(value, str) else value))


def parse_config(text: str, path: Path) -> ProjectConfig:
    """Parse and validate the TOML text of a project file (`parse_toml`: names and values
    against the schema) and give its settings."""
    data = parse_toml(text, path)
    trace_raw = data.get("trace", {})
    build_raw = data.get("build", {})
    kw: dict[str, Any] = {}
    for key in ("types", "entry", "allocators", "deallocators", "instrument_files"):
        if key in trace_raw:
            kw[key] = names(trace_raw[key])
    if "types" in kw:     # one spelling everywhere: `ring<int, 16>` is `ring<int,16>`
        kw["types"] = tuple(dict.fromkeys(type_key(t) for t in kw["types"]))
    if "instrument" in trace_raw:
        inst = trace_raw["instrument"]
        kw["instrument"] = None if inst in ("all", "auto") else names(inst)
        kw["instrument_auto"] = inst == "auto"
    for key in ("max_accesses", "max_objects", "max_sequences", "max_distinct", "cache_line",
                "backend"):
        if key in trace_raw:
            kw[key] = trace_raw[key]
    bkw: dict[str, Any] = {}
    if "mode" in build_raw:
        bkw["mode"] = build_raw["mode"]
    for key in ("cc", "cxx", "layouts"):
        if key in build_raw:
            bkw[key] = build_raw[key].strip()
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


@dataclass(frozen=True)
class ReorderConfig:
    """The [reorder] and [layout] tables: records whose layout is an ABI (shared with
    files, devices or other programs: never reordered), the weights of the kinds of
    operation in the layout objective and of the sharing term (docs/layout.md)."""

    abi: tuple[str, ...] = ()
    path: str | None = None
    entry_weights: dict[str, float] = field(default_factory=dict)
    """[layout] entry_weights: entry function -> weight of its kind of operation."""
    sharing_weight: float = SHARING_WEIGHT
    """[layout] sharing_weight: the weight of line transfers between threads against
    lines per operation (issue 30; 0: ignore them)."""

    def is_abi(self, *names: str) -> bool:
        return any(key_matches(n, a) for n in names if n for a in self.abi)


def load_reorder_config(cwd: str | None = None) -> ReorderConfig:
    """[reorder] and [layout] of the project file found from `cwd` (the working directory
    when None) as `find_config` finds it; the defaults without one (UserError when it is
    malformed)."""
    found = find_config(cwd=Path(cwd) if cwd is not None else None)
    if found is None:
        return ReorderConfig()
    data = parse_toml(read_project_text(found), found)     # names and values checked
    abi = data.get("reorder", {}).get("abi", [])
    weights = data.get("layout", {}).get("entry_weights", {})
    sharing = data.get("layout", {}).get("sharing_weight", SHARING_WEIGHT)
    return ReorderConfig(tuple(abi), str(found),
                         {name: float(w) for name, w in weights.items()}, float(sharing))


def load_entry_weights(cwd: str | None = None) -> dict[str, float]:
    """`[layout] entry_weights` of the project file, {} without one."""
    return load_reorder_config(cwd).entry_weights
