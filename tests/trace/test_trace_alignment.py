"""The objects' real alignment (issue 26, item 5): the runtime counts, per type, the base
addresses of the objects modulo 64, once per invocation (of any kind, nested ones too) and
object it touched, and writes them as `align TYPE MOD:COUNT ...` after the `stat` lines.

tests/trace/programs/align.c places objects at 0, 16, 48 and 8 modulo 64 in a
posix_memalign'ed buffer (registered with CACHEFIT_OBJECT) and one with aligned_alloc (a
typed allocation, 0 modulo 64), and touches them in invocations of one and two objects, one
that touches nothing, nested invocations (literal and a summary: max_accesses = 100) and
repeated invocations on one object (the runtime's inline end of an invocation).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, needs_clang, needs_gcc

from cachefit.trace.raw_trace import parse_raw

ENTRIES = ["one", "two", "maybe", "outer", "inner", "outer2", "pair"]
# 16: one(b) x3, maybe(b, 1), outer(d, b) and the inner(b) in it twice each, outer2(d, b)
# and the pair(b, d) in it; 48: one(c) x2, two(a, c); 8: outer(d, b) x2, outer2, pair;
# 0: one(a), two(a, c), inner(a, 1), one(e)
EXPECTED = {0: 4, 8: 4, 16: 10, 48: 3}


def raw_trace(tmp_path: Path, compiler: str) -> Path:
    b = build(tmp_path, ["align.c"], types=["obj"], entry=ENTRIES, compiler=compiler,
              config_extra="max_accesses = 100\n")
    raw_dir = tmp_path / "raw"
    raw_dir.mkdir()
    b.env["CACHEFIT_TRACE_DIR"] = str(raw_dir)
    b.run()
    (path,) = raw_dir.glob("cachefit-*.raw")
    return path


@pytest.mark.parametrize("compiler", [
    pytest.param("clang-19", marks=needs_clang),
    pytest.param("gcc", marks=needs_gcc),
])
def test_alignment_histogram_of_the_objects(tmp_path: Path, compiler: str) -> None:
    path = raw_trace(tmp_path, compiler)
    lines = path.read_text().splitlines()
    assert "align 0 0:4 8:4 16:10 48:3" in lines
    # after the stat lines, before the objects lines (issue 27) and the sequences
    kinds = [line.split(" ", 1)[0] for line in lines]
    at = kinds.index("align")
    assert kinds[at - 1] == "stat" and kinds[at + 1] == "objects"
    assert kinds[at + 2] in ("seq", "sum")
    raw = parse_raw(path)
    assert raw.alignment == {0: EXPECTED}
    # one count per invocation and object touched: 17 invocations (one 7, two 1, maybe 2,
    # outer 2, inner 3, outer2 1, pair 1), of which one touches nothing and five (two,
    # outer, outer2, pair) two objects
    assert raw.invocations == 17
    assert sum(EXPECTED.values()) == 17 - 1 + 5
    # pair's roles numbered by first touch within it, after inner's summary (role 1 of
    # outer renumbered in place) left the renumbering map clean
    pair = [s for s in raw.sequences if s.entry == ENTRIES.index("pair")]
    assert [(a.role, a.offset, a.mode) for s in pair for a in s.accesses] == [
        (0, 0, "w"), (1, 8, "w")]
