"""The `[reorder]` table of the project file `cachefit.toml`.

The project file is `$CACHEFIT_CONFIG` when set, else `cachefit.toml` in the current
directory; it is optional. `[reorder] abi = ["name", ...]` lists records whose layout is an
ABI (shared with files, devices or other programs) and must never be reordered. Read as
every stage reads the project file (cachefit.build.project_config); nothing is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cachefit.build.project_config import find_config, parse_toml, read_project_text
from cachefit.errors import Location, UserError
from cachefit.model.type_names import key_matches


@dataclass(frozen=True)
class ReorderConfig:
    abi: tuple[str, ...] = ()
    path: str | None = None

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
    return ReorderConfig(tuple(abi), path)
