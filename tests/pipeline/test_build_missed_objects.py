"""`cachefit build` says which allocation sites of a traced type it did not register
(issue 27): the note of the trace step, with the site and the `allocators` line, is in
the build's output and its summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compiled_helpers import private_cache

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]


@pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("make") is None,
                    reason="needs clang-19 and make")
def test_build_names_the_allocation_site_it_missed(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    for name in ("missed_alloc.c", "obj.h"):
        shutil.copy(PROGRAMS / name, project / name)
    (project / "Makefile").write_text(
        "prog: missed_alloc.c obj.h\n\t$(CC) -O0 -g -o $@ missed_alloc.c\n")
    (project / "cachefit.toml").write_text(
        '[trace]\ntypes = ["obj"]\nentry = ["op"]\n[build]\ncc = "clang-19"\n'
        'command = \'make -s CC="$CC"\'\nclean = "rm -f prog"\nworkload = "./prog"\n'
        'binaries = ["prog"]\noutput = "out"\n')
    env = dict(os.environ)
    for key in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
                "CACHEFIT_TRACE_DIR", "CACHEFIT_LAYOUTS", "CACHEFIT_UNITS_DIR"):
        env.pop(key, None)
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp_path))
    proc = subprocess.run([*CACHEFIT, "build", "--step", "profile", "--step", "trace"],
                          cwd=project, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wanted = ("obj: no object of obj was registered",
              "missed_alloc.c:28 (pool_get)",
              'add `allocators = ["pool_get"]` to [trace] in cachefit.toml')
    (note,) = [line for line in proc.stdout.splitlines() if line.startswith("note: obj:")]
    assert all(w in note for w in wanted)
    summary = json.loads((project / "out" / "summary.json").read_text())
    assert any(all(w in n for w in wanted) for n in summary["notes"])
