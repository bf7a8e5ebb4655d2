"""The sharing search's padded layouts, declared as the rewriter declares them (a
`char __cachefit_pad_<field>[N];` right before the field) and compiled with gcc and
clang-19: the compiler's offsets and sizeof are the ones the layout stage predicted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sharing_cases import STATS, compiled_offsets, stats_profile

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
    assert compiled_offsets(tmp_path, compiler, "stats", res.order, res.padding, DECL) == \
        [res.offsets[n] for n in res.order] + [res.size_after]
