"""Build-time mode: reorder_unit rewrites a preprocessed unit; the sources stay untouched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import write

from cachefit.errors import UnsafeTransformation
from cachefit.pipeline.unit_transform import reorder_unit

CLANG = shutil.which("clang-19")
pytestmark = pytest.mark.skipif(CLANG is None, reason="clang-19 not installed")

REC = """\
struct cfg {
    int a;
#ifdef WITH_B
    long b;     /* only with WITH_B */
#endif
    char c;
    int d;
};
"""
MAIN = """\
#include <stdio.h>
#include "cfg.h"
int main(void) {
    struct cfg x;
    x.a = 1; x.b = 2; x.c = 3; x.d = 4;
    printf("%d %ld %d %d %zu\\n", x.a, x.b, x.c, x.d, sizeof x);
    return 0;
}
"""


def _preprocess(tmp_path: Path, main: str) -> Path:
    write(tmp_path, {"cfg.h": REC, "main.c": main})
    out = tmp_path / "main.i"
    subprocess.run([str(CLANG), "-E", "-DWITH_B", str(tmp_path / "main.c"), "-o", str(out)],
                   check=True)
    return out


def _run(tmp_path: Path, unit: Path, name: str) -> str:
    exe = tmp_path / name
    subprocess.run([str(CLANG), "-Wall", "-Werror", str(unit), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_preprocessed_unit_is_reordered(tmp_path: Path) -> None:
    unit = _preprocess(tmp_path, MAIN)
    before = _run(tmp_path, unit, "before")
    original_source = (tmp_path / "cfg.h").read_bytes()
    out = reorder_unit(str(unit), [], "cfg", ["b", "d", "c", "a"])
    assert list(out) == [str(unit)]
    new_unit = tmp_path / "new.i"
    new_unit.write_text(out[str(unit)])
    text = out[str(unit)]
    body = text[text.index("struct cfg {"):]
    assert body.index("long b;") < body.index("int d;") < \
        body.index("char c;") < body.index("int a;")
    after = _run(tmp_path, new_unit, "after")
    assert after.split()[:4] == before.split()[:4]
    assert (tmp_path / "cfg.h").read_bytes() == original_source


def test_unit_with_positional_initialiser(tmp_path: Path) -> None:
    main = MAIN.replace("struct cfg x;\n    x.a = 1; x.b = 2; x.c = 3; x.d = 4;",
                        "struct cfg x = {1, 2, 3, 4};")
    unit = _preprocess(tmp_path, main)
    with pytest.raises(UnsafeTransformation, match="by position"):
        reorder_unit(str(unit), [], "cfg", ["b", "d", "c", "a"])
    before = _run(tmp_path, unit, "before")
    out = reorder_unit(str(unit), [], "cfg", ["b", "d", "c", "a"], fix_initializers=True)
    new_unit = tmp_path / "new.i"
    new_unit.write_text(out[str(unit)])
    assert "struct cfg x = {.a = 1, .b = 2, .c = 3, .d = 4};" in out[str(unit)]
    assert _run(tmp_path, new_unit, "after").split()[:4] == before.split()[:4]
