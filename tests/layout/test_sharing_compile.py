"""The sharing search's padded layouts, declared as the rewriter declares them (a
`char __cachefit_pad_<field>[N];` right before the field) and compiled with gcc and
clang-19: the compiler's offsets and sizeof are the ones the layout stage predicted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sharing_cases import STATS, stats_profile

from cachefit.layout import optimize_layout

COMPILERS = [c for c in ("gcc", "clang-19") if shutil.which(c)]
DECL = {"c0": "long c0", "c1": "long c1", "cfg": "int cfg[8]", "lock": "int lock"}


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize(("start", "weight"), [(0, 1.0), (16, 1.0), (48, 1.0), (0, 0.0)])
def test_the_compiler_agrees(tmp_path: Path, compiler: str, start: int,
                             weight: float) -> None:
    res = optimize_layout(STATS, stats_profile(1000, start=start), time_limit=1.0,
                          sharing_weight=weight)
    assert bool(res.padding) == (weight > 0)
    members = []
    for name in res.order:
        if name in res.padding:
            members.append(f"    char __cachefit_pad_{name}[{res.padding[name]}];")
        members.append(f"    {DECL[name]};")
    prints = "".join(f'    printf("%zu\\n", offsetof(struct stats, {n}));\n' for n in res.order)
    (tmp_path / "s.c").write_text(
        "#include <stddef.h>\n#include <stdio.h>\nstruct stats {\n" + "\n".join(members)
        + "\n};\nint main(void) {\n" + prints
        + '    printf("%zu\\n", sizeof(struct stats));\n    return 0;\n}\n')
    exe = tmp_path / "s"
    subprocess.run([compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(tmp_path / "s.c")], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert [int(v) for v in out.split()] == [res.offsets[n] for n in res.order] + \
        [res.size_after]
