"""The `[build]` keys of cachefit.toml that `cachefit build` reads (docs/cachefit-toml.md).

`load_pipeline_config` finds the project file like every other stage
(cachefit.model.project_config), validates the pipeline's keys (`command`, `clean`,
`workload`, `flatten`, `output`, `binaries`, `object_align`, `time_limit`, `march_native`,
`lto`, `pgo`, `retrace`) and resolves paths against the directory of the project file, where every
command runs. It never runs anything. An error about a value is located at that value, a
missing key at its table's header (issue 29). Other `[build]` keys (`mode`, `cc`, `cxx`, `layouts`)
belong to the compiler wrapper and are not checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachefit.errors import UserError
from cachefit.input_files import require_file
from cachefit.model.project_config import ProjectConfig, load_config
from cachefit.model.project_toml import value_error

DEFAULT_OUTPUT = "out/cachefit"


@dataclass(frozen=True)
class PipelineConfig:
    """What `cachefit build` needs: commands, target types and tailoring switches."""

    project: ProjectConfig
    root: Path                      # directory of cachefit.toml; commands run here
    command: str                    # the build command (run with CC/CXX = cachefit wrappers)
    workload: str                   # the command whose run is profiled
    types: tuple[str, ...]          # [trace] types: the records to reorder
    clean: str | None = None        # run before each build
    flatten: tuple[str, ...] = ()   # classes whose hierarchy is flattened
    output: Path = Path(DEFAULT_OUTPUT)
    binaries: tuple[str, ...] = ()  # build outputs to keep, relative to root
    object_align: int | None = None
    time_limit: float = 10.0
    march_native: bool = False
    lto: bool = False
    pgo: bool = False
    retrace: bool = False           # a full run traces the planned layout too (issue 26)
    jobs: int | None = None         # worker processes of the code-base scan (None: CPUs)
    scan_cache: bool = True         # the per-unit scan cache (docs/cache.md)

    @property
    def config_path(self) -> Path:
        assert self.project.path is not None
        return self.project.path


def _err(project: ProjectConfig, key: str, what: str, table: str = "build") -> UserError:
    """`what` is wrong with `key` of [table]: at its value, or at the table's header when
    the key is not written."""
    assert project.path is not None
    return value_error(project.text, project.path, table, key, what,
                       f"see docs/cachefit-toml.md, section [{table}]")


def _string(project: ProjectConfig, raw: Mapping[str, Any], key: str, required: bool
            ) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise _err(project, key, "is missing (cachefit build needs it)")
        return None
    if not isinstance(value, str) or not value.strip():
        raise _err(project, key, "must be a non-empty string (a shell command or path)")
    return value.strip()


def _strings(project: ProjectConfig, raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _err(project, key, "must be a list of strings")
    return tuple(v.strip() for v in value)


def _flag(project: ProjectConfig, raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise _err(project, key, "must be true or false")
    return value


def pipeline_config(project: ProjectConfig) -> PipelineConfig:
    """Validate the pipeline keys of an already parsed project file."""
    if project.path is None:
        raise UserError("no cachefit.toml found in this directory or a parent",
                        "write one with [trace] types/entry and [build] command/workload, "
                        "or set CACHEFIT_CONFIG")
    path = project.path
    build = project.raw.get("build", {})       # a table: parse_toml checked
    command = _string(project, build, "command", True)
    workload = _string(project, build, "workload", True)
    assert command is not None and workload is not None
    for key in ("types", "entry"):
        if not getattr(project.trace, key):
            raise _err(project, key, "is needed by cachefit build (the types to reorder "
                       "and the entry functions whose calls are invocations)", "trace")
    align = build.get("object_align")
    if align is not None and (isinstance(align, bool) or not isinstance(align, int)
                              or align <= 0 or align & (align - 1)):
        raise _err(project, "object_align", "must be a power of two (e.g. 64)")
    limit = build.get("time_limit", 10.0)
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        raise _err(project, "time_limit", "must be a positive number of seconds")
    output = Path(_string(project, build, "output", False) or DEFAULT_OUTPUT)
    root = path.parent.resolve()
    return PipelineConfig(
        project=project, root=root, command=command, workload=workload,
        types=project.trace.types, clean=_string(project, build, "clean", False),
        flatten=_strings(project, build, "flatten"),
        output=output if output.is_absolute() else root / output,
        binaries=_strings(project, build, "binaries"), object_align=align,
        time_limit=float(limit), march_native=_flag(project, build, "march_native"),
        lto=_flag(project, build, "lto"), pgo=_flag(project, build, "pgo"),
        retrace=_flag(project, build, "retrace"))


def load_pipeline_config(config_file: Path | None = None) -> PipelineConfig:
    """The pipeline settings of `config_file`, else of the project file found as usual."""
    env = None
    if config_file is not None:
        require_file(config_file, "name a cachefit.toml")
        env = {"CACHEFIT_CONFIG": str(config_file)}
    return pipeline_config(load_config(env))
