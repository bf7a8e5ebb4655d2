"""Dependency files of optimize builds are the ones the real compiler writes for the same
command line (file names, targets, prerequisites: the original source and headers)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from wrapper_helpers import CACHEFIT, COMPILERS, copy_project, run, wrapper_env

FORMS = [
    ["-MD", "-c", "item.c", "-o", "sub.o"],
    ["-MMD", "-c", "item.c", "list.c"],
    ["-MD", "main.c", "item.c", "list.c", "-o", "prog"],
    ["-MD", "-MF", "deps.txt", "-MT", "custom-target", "-c", "list.c"],
    ["-MMD", "-MP", "-MQ", "$(obj)", "-c", "main.c", "-o", "m.o"],
]


def _deps(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())
            if p.suffix == ".d" or p.name == "deps.txt"}


CASES = [pytest.param(cc.values[0], form, marks=cc.marks,
                      id=f"{cc.values[0]}-{'_'.join(form)[:40]}")
         for cc in COMPILERS for i, form in enumerate(FORMS)
         if cc.values[0] == "gcc" or i in (2, 4)]     # clang: the two unusual forms


@pytest.mark.parametrize("cc, form", CASES)
def test_same_dependency_files_as_the_compiler(cc: str, form: list[str],
                                               tmp_path: Path) -> None:
    real = copy_project("make_c", tmp_path / "real")
    wrapped = tmp_path / "wrapped"
    shutil.copytree(real, wrapped)
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC=cc,
                      CACHEFIT_LAYOUTS=str(real / "plan.json"))
    run([cc, *form], real, env)
    run([CACHEFIT, "cc", *form], wrapped, env)
    expected = _deps(real)
    assert expected, "the compiler wrote no dependency file"
    assert _deps(wrapped) == expected
