"""Issue 29 (follow-up of case 11): every bad value in cachefit.toml is located.

Unknown keys and tables were already `cachefit.toml:LINE:COL:`; a value of the wrong type
(`[trace] types = 5`, `[build] layouts = 5`) said only `cachefit.toml: [trace] types must be
a list of names`. Every value error of [trace], [build], [reorder] and [layout] now points
at the value (the first character after `key =`), and a key cachefit build needs and does
not find at its table's header.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cachefit.errors import Location, UserError
from cachefit.model.project_config import load_reorder_config
from cachefit.pipeline.pipeline_config import load_pipeline_config

CACHEFIT = str(Path(sys.executable).parent / "cachefit")
MARK = "@"
"""Written just before the value an error must point at; removed from the file."""

BASE: dict[str, dict[str, str]] = {
    "trace": {"types": '["item"]', "entry": '["score"]'},
    "build": {"command": '"make"', "workload": '"./prog"'},
    "reorder": {"abi": '["wire"]'},
    "layout": {"entry_weights": "{ score = 2 }"},
}
"""A project file every loader accepts; a case changes one key."""

WRONG: dict[str, dict[str, list[str]]] = {
    "trace": {
        "types": ["5", "[1]", '[""]', "{ a = 1 }"],
        "entry": ["5", "true"],
        "allocators": ["5"],
        "deallocators": ["[1, 2]"],
        "instrument": ["5"],
        "instrument_files": ["true"],
        "max_accesses": ['"many"', "0"],
        "max_objects": ["40000"],
        "max_sequences": ["1.5"],
        "max_distinct": ["0", "16777217"],
        "cache_line": ["true"],
        "backend": ['"gcc"', "5"],
    },
    "build": {
        "mode": ['"fast"', "5"],
        "cc": ["5", '""'],
        "cxx": ["[1]"],
        "layouts": ["5", '"  "'],
        "command": ["5", '""'],
        "workload": ["[]"],
        "clean": ["5"],
        "flatten": ["5"],
        "output": ["5"],
        "binaries": ["[1]"],
        "object_align": ["48", '"64"'],
        "time_limit": ['"long"', "0", "true"],
        "march_native": ["1"],
        "lto": ['"yes"'],
        "pgo": ["1"],
    },
    "reorder": {"abi": ["5", '"wire"', "[1]"]},
    "layout": {"entry_weights": ["5", '"high"']},
}


def _write(table: str, key: str, value: str) -> str:
    """The project file of BASE with `key` of [table] set to `value` (marked)."""
    out = []
    for name, keys in BASE.items():
        out.append(f"[{name}]")
        written = dict(keys)
        if name == table:
            written[key] = MARK + value
        out += [f"{k} = {v}" for k, v in written.items()]
        out.append("")
    return "\n".join(out)


def _marked(text: str, directory: Path) -> tuple[Path, Location]:
    """Write `text` without its mark as cachefit.toml; the place of the mark."""
    before = text[:text.index(MARK)]
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    path = directory / "cachefit.toml"
    path.write_text(text.replace(MARK, "", 1))
    return path, Location(str(path), line, col)


def _load(table: str) -> Callable[[Path], object]:
    """The loader that reads `table`: the pipeline's (which reads [trace] and [build]
    through the project file's parser first), or the reorder stage's."""
    if table in ("trace", "build"):
        return lambda path: load_pipeline_config(path)
    return lambda path: load_reorder_config(str(path.parent))


CASES = [(t, k, v) for t, keys in WRONG.items() for k, values in keys.items() for v in values]


@pytest.mark.parametrize(("table", "key", "value"), CASES,
                         ids=[f"{t}.{k}={v}" for t, k, v in CASES])
def test_a_wrong_value_is_located_at_the_value(table: str, key: str, value: str,
                                               tmp_path: Path) -> None:
    path, where = _marked(_write(table, key, value), tmp_path)
    with pytest.raises(UserError) as info:
        _load(table)(path)
    assert info.value.location == where, info.value.message()
    assert f"[{table}] {key}" in info.value.what
    assert not info.value.what.startswith(str(path))     # the place says it once


SPELLINGS = [
    ("trace", '[trace]\n"types" = @5\nentry = ["score"]\n'),             # a quoted key
    ("trace", '[trace]\ntypes=@5\n'),                                      # no spaces
    ("trace", '[trace]\nentry = ["score"]\n  types   =   @[\n  "a", 5,\n]\n'),
    ("trace", '[build]\ncommand = "make"\n[trace.qemu]\ntypes = ["x"]\n[trace]\n'
              'types = @"  "\n'),                           # not [trace.qemu]'s types
    ("build", 'trace = { types = ["item"], entry = ["f"] }\n[build]\ncommand = "make"\n'
              'workload = "w"\nlto = @"no"  # comment\n'),
    ("layout", '[layout]\nentry_weights = { score = 1, deflate = @"high" }\n'),
    ("layout", '[layout]\nentry_weights.deflate = @-1\n'),
    ("layout", '[layout.entry_weights]\nscore = 2\ndeflate = @nan\n'),
    ("reorder", '[reorder]\nabi = @["wire", 1]\n'),
]


@pytest.mark.parametrize(("table", "text"), SPELLINGS)
def test_the_value_is_found_however_it_is_written(table: str, text: str,
                                                  tmp_path: Path) -> None:
    path, where = _marked(text, tmp_path)
    with pytest.raises(UserError) as info:
        _load(table)(path)
    assert info.value.location == where, info.value.message()


@pytest.mark.parametrize(("text", "what"), [
    ('[trace]\ntypes = ["item"]\nentry = ["f"]\n@[build]\nworkload = "w"\n',
     "[build] command is missing"),
    ('[trace]\ntypes = ["item"]\nentry = ["f"]\n@[build]\ncommand = "make"\n',
     "[build] workload is missing"),
    ('@[trace]\ntypes = ["item"]\n[build]\ncommand = "make"\nworkload = "w"\n',
     "[trace] entry is needed by cachefit build"),
    ('[trace]\ntypes = @[]\nentry = ["f"]\n[build]\ncommand = "make"\nworkload = "w"\n',
     "[trace] types is needed by cachefit build"),
])
def test_a_missing_key_is_located_at_its_table(text: str, what: str, tmp_path: Path) -> None:
    path, where = _marked(text, tmp_path)
    with pytest.raises(UserError) as info:
        load_pipeline_config(path)
    assert info.value.location == where, info.value.message()
    assert info.value.what.startswith(what)


def test_the_command_line_says_where(tmp_path: Path) -> None:
    """`cachefit build` prints the one located line (exit 2)."""
    path, where = _marked('[trace]\ntypes = @5\nentry = ["f"]\n', tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    proc = subprocess.run([CACHEFIT, "build"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"cachefit: error: {path}:{where.line}:{where.col}: [trace] types "
                           "must be a list of names; see docs/cachefit-toml.md\n")
