"""CACHEFIT_UNITS_DIR keeps the units of compiles that succeeded only: configure checks that
fail on purpose (CMake's CheckSymbolExists compiles `(void)off_t` to learn that a name is
no symbol) are no units of the program, and the layout step of `cachefit build` parses
every kept unit (expat's profile build stopped on CheckSymbolExists.c)."""

from __future__ import annotations

from pathlib import Path

import pytest
from wrapper_helpers import CACHEFIT, COMPILERS, copy_project, run, wrapper_env

CHECK = ("#include <sys/types.h>\n#include \"item.h\"\n"
         "int main(int argc, char **argv) { (void)argv; return ((int *)(&off_t))[argc]; }\n")


@pytest.mark.parametrize("mode", ["profile", "optimize"])
@pytest.mark.parametrize("cc", COMPILERS)
def test_failed_compiles_leave_no_unit(cc: str, mode: str, tmp_path: Path) -> None:
    project = copy_project("make_c", tmp_path / "p")
    units = tmp_path / "units"
    env = wrapper_env(tmp_path, mode, CACHEFIT_CC=cc, CACHEFIT_UNITS_DIR=str(units))
    (project / "check.c").write_text(CHECK)
    proc = run([CACHEFIT, "cc", "-c", "check.c", "-o", "check.o"], project, env, ok=False)
    assert proc.returncode != 0 and not (project / "check.o").exists()
    assert not list(units.glob("check-*")) if units.exists() else True
    # a unit libclang parses but the compiler rejects (-Werror): not kept either
    (project / "warn.c").write_text('#include "item.h"\n'
                                    "long f(struct item *p) { int unused; return p->id; }\n")
    proc = run([CACHEFIT, "cc", "-Wall", "-Werror", "-c", "warn.c", "-o", "warn.o"], project,
               env, ok=False)
    assert proc.returncode != 0 and not (project / "warn.o").exists()
    assert not list(units.glob("warn-*")) if units.exists() else True
    run([CACHEFIT, "cc", "-c", "item.c", "-o", "item.o"], project, env)
    kept = sorted(p.name for p in units.iterdir())
    assert [n.rsplit("-", 1)[0] for n in kept] == ["item", "item"], kept
