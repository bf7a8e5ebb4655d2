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


NEEDS = pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("make") is None,
                           reason="needs clang-19 and make")


def _build(tmp_path: Path, allocators: str = "") -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = tmp_path / "proj"
    project.mkdir()
    for name in ("missed_alloc.c", "obj.h"):
        shutil.copy(PROGRAMS / name, project / name)
    (project / "Makefile").write_text(
        "prog: missed_alloc.c obj.h\n\t$(CC) -O0 -g -o $@ missed_alloc.c\n")
    (project / "cachefit.toml").write_text(
        f'[trace]\ntypes = ["obj"]\nentry = ["op"]\n{allocators}[build]\ncc = "clang-19"\n'
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
    return project, proc


def _unconverted(project: Path) -> object:
    meta = json.loads((project / "out" / "profile.json").read_text())
    return meta.get("unconverted_sites")


@NEEDS
def test_build_names_the_allocation_site_it_missed(tmp_path: Path) -> None:
    project, proc = _build(tmp_path)
    wanted = ("obj: no object of obj was registered",
              "missed_alloc.c:28 (pool_get)",
              'add `allocators = ["pool_get"]` to [trace] in cachefit.toml')
    (note,) = [line for line in proc.stdout.splitlines() if line.startswith("note: obj:")]
    assert all(w in note for w in wanted)
    summary = json.loads((project / "out" / "summary.json").read_text())
    assert any(all(w in n for w in wanted) for n in summary["notes"])
    # the link step counted the site in the program's blob, the trace kept the count
    assert _unconverted(project) == {str(project / "prog"): 1}


@NEEDS
def test_no_site_missed_needs_no_look_at_the_program(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the site registered (`allocators`) and the type touched, the blob's count of
    unconverted sites (0) is all the notes need: the program is not read again (nor
    pyelftools imported by `cachefit trace`)."""
    project, proc = _build(tmp_path, 'allocators = ["pool_get"]\n')
    assert not [line for line in proc.stdout.splitlines() if line.startswith("note: obj:")]
    assert _unconverted(project) == {str(project / "prog"): 0}
    from cachefit.model.profile import load
    from cachefit.trace import alloc_sites

    def no_read(program: object) -> list[object]:
        raise AssertionError(f"read {program}")

    monkeypatch.setattr(alloc_sites, "read_site_notes", no_read)
    profile = load(project / "out" / "profile.json")
    assert alloc_sites.missed_notes(profile) == []
    profile.metadata["unconverted_sites"] = {str(project / "prog"): 1}
    with pytest.raises(AssertionError, match="read "):
        alloc_sites.missed_notes(profile)
