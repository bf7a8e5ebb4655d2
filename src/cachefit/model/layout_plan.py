"""The layout plan file (docs/layout-plan.md): which classes to flatten and which member
order (and padding, issue 30) each record gets in an optimized build.

`load_plan` reads a plan and checks it against its published JSON Schema
(schemas/layout-plan.schema.json), `save_plan` writes one atomically (temporary file
and rename), `find_plan` locates the plan of a build (CACHEFIT_LAYOUTS, else `[build]
layouts` in cachefit.toml, relative to that file). `LayoutPlan.entries_for` gives the part
of a plan that applies to a set of type names (what the object cache keys on). This module
only reads and writes the plan; it never parses C/C++ or runs a compiler.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.atomic_files import write_bytes_atomic
from cachefit.errors import UserError
from cachefit.model.schema_check import first_error

FORMAT = "cachefit-layout-plan"
VERSION = 1
SCHEMA = "layout-plan.schema.json"
"""The published JSON Schema of the plan (cachefit/model/schemas/)."""
LAYOUTS_ENV = "CACHEFIT_LAYOUTS"
# Set to 1 by `cachefit build --step retrace` (issue 26): a profile-mode wrapper applies the
# plan's member orders too, not only its flattening, so the traced build has the planned
# layout.
PROFILE_REORDER_ENV = "CACHEFIT_PROFILE_REORDER"


@dataclass(frozen=True)
class RecordPlan:
    """The member order of one record (after flattening when it is flattened)."""

    order: tuple[str, ...]
    expected_size: int | None = None
    padding: Mapping[str, int] = field(default_factory=dict)
    """Bytes of padding inserted right before the named field (issue 30: fields written
    by one thread kept off the lines other threads use); empty: none."""


@dataclass(frozen=True)
class LayoutPlan:
    """A whole plan: classes to flatten, record orders, and whether positional
    initialisers may be rewritten into designated ones."""

    flatten: tuple[str, ...] = ()
    records: Mapping[str, RecordPlan] = field(default_factory=dict)
    fix_initializers: bool = False
    path: Path | None = None

    @property
    def type_names(self) -> tuple[str, ...]:
        """Every name the plan mentions (flattened classes first, then records)."""
        names = list(self.flatten)
        names += [r for r in self.records if r not in names]
        return tuple(names)

    def entries_for(self, names: Iterable[str]) -> dict[str, Any]:
        """The part of the plan that concerns `names`, as plain JSON data (stable order)."""
        wanted = set(names)
        return {
            "flatten": [c for c in self.flatten if c in wanted],
            "records": {n: {"order": list(r.order), "expected_size": r.expected_size}
                        | ({"padding": dict(r.padding)} if r.padding else {})
                        for n, r in sorted(self.records.items()) if n in wanted},
            "fix_initializers": self.fix_initializers,
        }

    def to_json(self) -> dict[str, Any]:
        records: dict[str, Any] = {}
        for name, rec in self.records.items():
            entry: dict[str, Any] = {"order": list(rec.order)}
            if rec.expected_size is not None:
                entry["expected_size"] = rec.expected_size
            if rec.padding:
                entry["padding"] = dict(rec.padding)
            records[name] = entry
        return {"format": FORMAT, "version": VERSION, "flatten": list(self.flatten),
                "records": records, "fix_initializers": self.fix_initializers}


def _bad(path: Path | str, what: str) -> UserError:
    return UserError(f"{path}: {what}", "see docs/layout-plan.md")


def parse_plan(data: Any, path: Path | str = "<plan>") -> LayoutPlan:
    """Check decoded JSON against the published schema (schemas/layout-plan.schema.json)
    and build the plan."""
    error = first_error(SCHEMA, data)
    if error is not None:
        raise _bad(path, error.message)
    records = {name.strip(): RecordPlan(tuple(v.strip() for v in rec["order"]),
                                        rec.get("expected_size"),
                                        _padding(path, name.strip(), rec))
               for name, rec in data.get("records", {}).items()}
    return LayoutPlan(tuple(v.strip() for v in data.get("flatten", [])), records,
                      data.get("fix_initializers", False),
                      Path(path) if path != "<plan>" else None)


def _padding(path: Path | str, name: str, rec: Mapping[str, Any]) -> dict[str, int]:
    """A record's `padding` (schema-checked): every name must be a field of its order."""
    order = {v.strip() for v in rec["order"]}
    out = {f.strip(): n for f, n in rec.get("padding", {}).items()}
    for field_name in out:
        if field_name not in order:
            raise _bad(path, f"record {name}: padding before {field_name}, which `order` "
                       "does not name")
    return out


def load_plan(path: Path | str) -> LayoutPlan:
    """Read and validate the plan at `path`."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise UserError(f"cannot read layout plan {p}: {exc.strerror}",
                        f"check {LAYOUTS_ENV} or [build] layouts") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{p}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
                        "see docs/layout-plan.md") from exc
    plan = parse_plan(data, p)
    return LayoutPlan(plan.flatten, plan.records, plan.fix_initializers, p.resolve())


def save_plan(plan: LayoutPlan, path: Path | str) -> None:
    """Write `plan` to `path` atomically (a temporary file in the same directory, renamed)."""
    write_bytes_atomic(path, (json.dumps(plan.to_json(), indent=2) + "\n").encode())


def plan_path(config_path: Path | None, layouts: str | None,
              env: Mapping[str, str]) -> Path | None:
    """CACHEFIT_LAYOUTS, else `[build] layouts` relative to the project file, else None."""
    named = env.get(LAYOUTS_ENV)
    if named:
        return Path(named)
    if layouts and config_path is not None:
        return (config_path.parent / layouts).resolve()
    return None


def find_plan(config_path: Path | None, layouts: str | None,
              env: Mapping[str, str]) -> LayoutPlan | None:
    """The build's plan, or None when neither the environment nor the project names one."""
    p = plan_path(config_path, layouts, env)
    return None if p is None else load_plan(p)
