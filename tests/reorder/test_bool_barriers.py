"""Barriers before `_Bool`-only bit-field units are spelled with the unit's own type.

A `_Bool` (C) / `bool` (C++) bit-field moved right after another one would be packed into
its byte; the rewriter declares an unnamed zero-width bit-field before it. For a unit made
only of `_Bool` fields that barrier is `_Bool : 0;` in C and `bool : 0;` in C++ (a type the
code already uses), and the result must compile without a warning under -Wall -Wextra
-Wpedantic -Werror with gcc 12 and clang-19 in several language standards, print the same
values, and have exactly the layout the placement model predicted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from layout_programs import Member, header, load, predicted, program, split
from reorder_helpers import C_COMPILERS, CXX_COMPILERS, write

pytestmark = pytest.mark.skipif(not C_COMPILERS, reason="no C compiler")

MEMBERS = [Member("a", "_Bool", 1), Member("x", "int"), Member("c", "_Bool", 1),
           Member("d", "_Bool", 1), Member("y", "char"), Member("e", "_Bool", 1)]
ORDER = ["a", "c", "d", "e", "x", "y"]
PEDANTIC = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]


def run(directory: Path, compiler: str, std: str, main: str) -> str:
    exe = directory / f"prog-{compiler}-{std}"
    subprocess.run([compiler, f"-std={std}", *PEDANTIC, "-o", str(exe),
                    str(directory / main)], check=True, capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("cxx", [False, True], ids=["c", "cxx"])
def test_bool_unit_barrier_is_pedantic_clean(tmp_path: Path, cachefit, cxx: bool) -> None:
    compilers = CXX_COMPILERS if cxx else C_COMPILERS
    stds = ["c++11", "c++17", "c++20"] if cxx else ["c99", "c11", "c17"]
    main = "main.cc" if cxx else "main.c"
    lang = ["-x", "c++", "-std=c++17"] if cxx else ["-std=c11"]
    write(tmp_path, {"rec.h": header(MEMBERS, cxx), main: program(MEMBERS, cxx)})
    before = {(cc, std): split(run(tmp_path, cc, std, main)) for cc in compilers
              for std in stds}
    expected, walls = predicted(load(tmp_path / "rec.h", lang), ORDER)
    want = "bool" if cxx else "_Bool"
    # c after a, and e after d would share their byte: two barriers of the units' own type.
    assert walls == {"c": want, "e": want}
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", ",".join(ORDER),
                              "--in-place", "--json", "--", *lang)
    assert code == 0, err
    assert json.loads(out)["bitfield_barriers"] == walls
    text = (tmp_path / "rec.h").read_text()
    assert text.count(f"{want} : 0;") == 2 and "unsigned char" not in text, text
    for cc in compilers:
        for std in stds:
            values, layout = split(run(tmp_path, cc, std, main))
            assert values == before[(cc, std)][0], (cc, std)
            assert layout == expected, (cc, std, text)
