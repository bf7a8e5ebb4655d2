"""The README's command examples run as written (issue 29: `--binary build/pingpong-flat`
did not exist after `make demo`).

Every line of the README's code blocks that starts with `.venv/bin/cachefit` or `make -s -C
examples/` is run from the repository's root, as a user would paste it, and must exit 0 and
print the record. The walkthrough on leveldb is a transcript of bench/projects/run.sh
(bench/projects/RESULTS.md), not run here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def _examples() -> list[str]:
    text = (REPO / "README.md").read_text()
    lines: list[str] = []
    for block in re.findall(r"^```\n(.*?)^```", text, re.S | re.M):
        lines += [line.strip() for line in block.splitlines()
                  if line.startswith((".venv/bin/cachefit ", "make -s -C examples/"))]
    return lines


def test_the_readme_has_examples() -> None:
    assert len(_examples()) >= 3


@pytest.mark.parametrize("command", _examples())
def test_readme_example_runs_as_written(command: str, tmp_path: Path) -> None:
    env = dict(os.environ, CACHEFIT_CACHE_DIR=str(tmp_path / "cache"))
    # the README's .venv/bin is this interpreter's (the venv the tests run in)
    line = command.replace(".venv/bin/", f"{VENV_BIN}/")
    proc = subprocess.run(["bash", "-c", line], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False, timeout=600)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    assert "tcb" in proc.stdout
