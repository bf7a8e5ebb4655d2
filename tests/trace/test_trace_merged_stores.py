"""Stores the optimizer would turn into memset/memcpy are traced (issue 26).

clang's sanitizer coverage instruments load and store instructions at the end of the
optimizer's pipeline; before it, MemCpyOpt merges adjacent stores into llvm.memset (zlib's
init_block: `s->opt_len = s->static_len = 0L; s->sym_next = s->matches = 0;` became one
store of sym_next and a 20-byte memset of opt_len..matches) and LoopIdiomRecognize turns
clearing and copying loops into llvm.memset/llvm.memcpy (gen_bitlen's bl_count loop), which
the pass does not see: none of those writes reached the profile at -O2. Profile builds
compile with -fno-builtin-memset/-memcpy/-memmove, so the stores stay stores
(programs/merged_stores.c). gcc's thread sanitizer reports the memset and memcpy its
loop distribution forms, so gcc builds need no flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, needs_clang, needs_gcc

from cachefit.model.profile import Profile

W = "w"
ENTRIES = ["reset", "clear_count", "copy_count"]


def written(prof: Profile, kind: str) -> set[int]:
    """The bytes of `struct state` written by the invocations of `kind`."""
    out: set[int] = set()
    for s in prof.types["state"].sequences:
        if s.entry != kind:
            continue
        for a in s.accesses:
            if a.mode == W:
                out.update(range(a.offset, a.offset + a.size))
    return out


@pytest.mark.parametrize(("compiler", "opt"), [
    pytest.param("clang-19", "-O0", marks=needs_clang),
    pytest.param("clang-19", "-O2", marks=needs_clang),
    pytest.param("gcc", "-O2", marks=needs_gcc),
])
def test_stores_merged_into_memset_or_memcpy_are_traced(tmp_path: Path, compiler: str,
                                                         opt: str) -> None:
    b = build(tmp_path, ["merged_stores.c"], types=["state"], entry=ENTRIES,
              compiler=compiler, flags=(opt, "-g"))
    prof = b.trace()
    assert b.run().split() == ["7", "0", "20"]
    # sym_next, opt_len, static_len and matches; count[16] twice.
    assert written(prof, "reset") == {*range(0, 4), *range(8, 28)}
    assert written(prof, "clear_count") == set(range(32, 64))
    assert written(prof, "copy_count") == set(range(32, 64))
    assert prof.types["state"].outside_objects == 0
