"""The `[reorder]` and `[layout]` tables of the project file `cachefit.toml`.

The project file is `$CACHEFIT_CONFIG` when set, else `cachefit.toml` in the current
directory; it is optional. `[reorder] abi = ["name", ...]` lists records whose layout is an
ABI (shared with files, devices or other programs) and must never be reordered.
`[layout] entry_weights = { name = weight, ... }` weighs kinds of operation (entry
functions) in the layout objective instead of their invocation counts (docs/layout.md).
Read as every stage reads the project file (cachefit.pipeline.project_config); nothing is
written. A bad value is an error located at that value (issue 29).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.errors import UserError
from cachefit.model.type_names import key_matches
from cachefit.pipeline.project_config import (
    find_config,
    parse_toml,
    read_project_text,
    value_place,
)


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
    text = read_project_text(Path(path))
    data = parse_toml(text, Path(path))
    table = data.get("reorder", {})     # tables: parse_toml checked
    abi = table.get("abi", [])
    if not isinstance(abi, list) or not all(isinstance(a, str) for a in abi):
        raise UserError("[reorder] abi must be a list of record names",
                        'write e.g. abi = ["wire_header", "ns::disk_block"]',
                        value_place(text, Path(path), "reorder", "abi"))
    return ReorderConfig(tuple(abi), path, _entry_weights(data.get("layout", {}), text, path))


def _entry_weights(table: Any, text: str, path: str) -> dict[str, float]:
    weights = table.get("entry_weights", {})
    todo = 'write e.g. entry_weights = { deflate = 256, longest_match = 1000 } (numbers >= 0)'
    if not isinstance(weights, dict):
        raise UserError("[layout] entry_weights must be a table of entry functions and "
                        "weights", todo, value_place(text, Path(path), "layout", "entry_weights"))
    out: dict[str, float] = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) \
                or w < 0:
            raise UserError(f"[layout] entry_weights: the weight of {name} must be a number "
                            f">= 0, not {w!r}", todo,
                            value_place(text, Path(path), "layout.entry_weights", name))
        out[name] = float(w)
    return out


def load_entry_weights(cwd: str | None = None) -> dict[str, float]:
    """`[layout] entry_weights` of the project file, {} without one."""
    return load_reorder_config(cwd).entry_weights
