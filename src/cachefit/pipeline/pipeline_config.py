"""The `[build]` keys of cachefit.toml that `cachefit build` reads (docs/cachefit-toml.md).

`load_pipeline_config` finds the project file like every other stage
(cachefit.model.project_config, which checks every value against the published schema)
and gives the pipeline's keys (`command`, `clean`, `workload`, `flatten`, `output`,
`binaries`, `object_align`, `time_limit`, `march_native`, `lto`, `pgo`, `retrace`), with
paths resolved against the directory of the project file, where every command runs. What
the schema cannot state is checked here: the keys `cachefit build` needs (a missing one is
located at its table's header, issue 29) and that `object_align` is a power of two (at the
value). It never runs anything. Other `[build]` keys (`mode`, `cc`, `cxx`, `layouts`)
belong to the compiler wrapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cachefit.errors import UserError
from cachefit.input_files import require_file
from cachefit.model.project_config import ProjectConfig, load_config, names
from cachefit.model.project_toml import rule_error, value_error

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


def _required(project: ProjectConfig, key: str) -> str:
    value = project.raw.get("build", {}).get(key)
    if value is None:
        raise _err(project, key, "is missing (cachefit build needs it)")
    return value.strip()


def pipeline_config(project: ProjectConfig) -> PipelineConfig:
    """The pipeline keys of an already parsed (and schema-checked) project file, with the
    rules the schema cannot state."""
    if project.path is None:
        raise UserError("no cachefit.toml found in this directory or a parent",
                        "write one with [trace] types/entry and [build] command/workload, "
                        "or set CACHEFIT_CONFIG")
    path = project.path
    build = project.raw.get("build", {})       # values: the schema checked them
    command = _required(project, "command")
    workload = _required(project, "workload")
    for key in ("types", "entry"):
        if not getattr(project.trace, key):
            raise _err(project, key, "is needed by cachefit build (the types to reorder "
                       "and the entry functions whose calls are invocations)", "trace")
    align = build.get("object_align")
    if align is not None and align & (align - 1):
        raise rule_error(project.text, path, "build", "object_align")
    output = Path(build.get("output", DEFAULT_OUTPUT).strip())
    clean = build.get("clean")
    root = path.parent.resolve()
    return PipelineConfig(
        project=project, root=root, command=command, workload=workload,
        types=project.trace.types, clean=clean.strip() if clean is not None else None,
        flatten=names(build.get("flatten", [])),
        output=output if output.is_absolute() else root / output,
        binaries=names(build.get("binaries", [])), object_align=align,
        time_limit=float(build.get("time_limit", 10.0)),
        march_native=build.get("march_native", False), lto=build.get("lto", False),
        pgo=build.get("pgo", False), retrace=build.get("retrace", False))


def load_pipeline_config(config_file: Path | None = None) -> PipelineConfig:
    """The pipeline settings of `config_file`, else of the project file found as usual."""
    env = None
    if config_file is not None:
        require_file(config_file, "name a cachefit.toml")
        env = {"CACHEFIT_CONFIG": str(config_file)}
    return pipeline_config(load_config(env))
