"""The `[reorder]` and `[layout]` tables of the project file `cachefit.toml`.

The project file is `$CACHEFIT_CONFIG` when set, else `cachefit.toml` in the current
directory; it is optional. `[reorder] abi = ["name", ...]` lists records whose layout is an
ABI (shared with files, devices or other programs) and must never be reordered.
`[layout] entry_weights = { name = weight, ... }` weighs kinds of operation (entry
functions) in the layout objective instead of their invocation counts (docs/layout.md).
Read as every stage reads the project file (cachefit.build.project_config); nothing is
written.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.build.project_config import find_config, parse_toml, read_project_text
from cachefit.errors import Location, UserError
from cachefit.model.type_names import key_matches


@dataclass(frozen=True)
class ReorderConfig:
    abi: tuple[str, ...] = ()
    path: str | None = None
    entry_weights: dict[str, float] = field(default_factory=dict)
    """[layout] entry_weights: entry function -> weight of its kind of operation."""

    def is_abi(self, *names: str) -> bool:
        return any(key_matches(n, a) for n in names if n for a in self.abi)


def load_reorder_config(cwd: str | None = None) -> ReorderConfig:
    """Read the project file if there is one (UserError when it is malformed)."""
    if os.environ.get("CACHEFIT_CONFIG"):
        path = str(find_config())      # a UserError when it names no file
    else:
        path = os.path.join(cwd or os.getcwd(), "cachefit.toml")
        if not os.path.isfile(path):
            return ReorderConfig()
    data = parse_toml(read_project_text(Path(path)), Path(path))
    table = data.get("reorder", {})
    abi = table.get("abi", []) if isinstance(table, dict) else None
    if not isinstance(abi, list) or not all(isinstance(a, str) for a in abi):
        raise UserError(f"{path}: [reorder] abi must be a list of record names",
                        'write e.g. abi = ["wire_header", "ns::disk_block"]', Location(path))
    return ReorderConfig(tuple(abi), path, _entry_weights(data.get("layout", {}), path))


def _entry_weights(table: Any, path: str) -> dict[str, float]:
    weights = table.get("entry_weights", {}) if isinstance(table, dict) else {}
    todo = 'write e.g. entry_weights = { deflate = 256, longest_match = 1000 } (numbers >= 0)'
    if not isinstance(weights, dict):
        raise UserError(f"{path}: [layout] entry_weights must be a table of entry "
                        "functions and weights", todo, Location(path))
    out: dict[str, float] = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) \
                or w < 0:
            raise UserError(f"{path}: [layout] entry_weights: the weight of {name} must be "
                            f"a number >= 0, not {w!r}", todo, Location(path))
        out[name] = float(w)
    return out


def load_entry_weights(cwd: str | None = None) -> dict[str, float]:
    """`[layout] entry_weights` of the project file, {} without one."""
    return load_reorder_config(cwd).entry_weights
