"""memcpy/memmove/memset in profile builds (programs/memops.c).

memops.c copies and fills fields of `struct obj` through the C library and a builtin; the
profile must hold one access per object element overlapped, of the overlapped size, and
only in instrumented functions. A whole-struct assignment is a documented limit of the
clang backend (clang lowers it to llvm.memcpy, which sanitizer coverage does not see);
gcc's thread sanitizer reports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import (
    build,
    calls_in,
    needs_clang,
    needs_gcc,
    seqs,
)

R, W = "r", "w"
COPY = ((0, 8, 9, R), (1, 8, 9, W), (1, 0, 4, W), (0, 0, 4, R))
CLEAR = ((0, 0, 24, W), (1, 0, 24, W))
ENTRIES = ["copy", "clear", "assign"]


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_sees_memcpy_memmove_memset(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES, flags=(opt, "-g"))
    prof = b.trace()
    assert b.run().split()[0] == "7"
    # assign(): the struct copy is invisible to sanitizer coverage, the field write is not.
    assert seqs(prof, "obj") == {COPY: 2, CLEAR: 2, ((0, 16, 1, W),): 1}
    assert prof.invocations == 5
    assert prof.types["obj"].outside_objects == 0


@needs_gcc
def test_gcc_sees_memops_and_struct_copies(tmp_path: Path) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES, compiler="gcc")
    prof = b.trace()
    # gcc's thread sanitizer reports the struct copy as a write and a read range.
    assert seqs(prof, "obj") == {COPY: 2, CLEAR: 2,
                                 ((0, 0, 24, W), (1, 0, 24, R), (0, 16, 1, W)): 1}


@needs_clang
def test_memops_are_redirected_only_in_instrumented_functions(tmp_path: Path) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES,
              config_extra='instrument = ["clear"]\n')
    prof = b.trace()
    assert "__cachefit_memcpy" not in calls_in(b.program, "copy")
    assert seqs(prof, "obj") == {CLEAR: 2}
    assert prof.invocations == 5
