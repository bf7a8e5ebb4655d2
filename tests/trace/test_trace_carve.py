"""Objects carved out of a bigger block (issue 27 item 2): a bump pool's chunks, a
record inside an allocated untraced record (Lua's LX/lua_State), a record after a header
in a `void *` blob (SQLite's BtCursor in its VdbeCursor blob). No `allocators`; the
profiles are exact and hold nothing of the untraced parts around the objects."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_typed_alloc import COMPILERS
from trace_helpers import build, needs_clang, seqs

from cachefit.model.project_config import TraceConfig
from cachefit.trace.unit_instrument import instrument_preprocessed

R, W = "r", "w"
ENTRY = ["use_item", "use_state", "use_bytes", "use_rec"]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_carved_objects_exact_profile(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["carve.c"], types=["item", "state", "rec"], entry=ENTRY,
              compiler=compiler)
    assert b.run() == "2 7 2\n"
    p = b.trace()
    # 6 carves of the pool (3, reset, the same 3 again: registered once) and the one
    # carved 8 bytes further across the old ones
    assert seqs(p, "item") == {((0, 0, 4, W), (0, 0, 4, R), (0, 4, 4, W)): 7}
    assert p.types["item"].outside_objects == 0
    # the LX's member, at offset 8 of the block; nothing once the block is freed and reused
    assert seqs(p, "state") == {((0, 0, 8, W),): 1}
    assert p.types["state"].outside_objects == 0
    assert seqs(p, "rec") == {((0, 0, 8, R), (0, 8, 8, W)): 1}
    assert p.invocations == 7 + 1 + 2 + 1
    registered = p.metadata.get("registered")
    assert isinstance(registered, dict)
    assert registered["item"] == 4      # the second round's carves registered nothing
    assert registered["rec"] == 1


@needs_clang
def test_what_is_a_carve() -> None:
    """Casts of memory computed into a block are carves; views of records, values from
    calls, pointers read from variables and integers are not."""
    src = b"""
    struct t { int a; };
    struct u { struct t m; char pad[8]; };
    char arena[64];
    void *get(unsigned long);
    struct t *g1(char *p, unsigned n) { return (struct t *)(p + n); }          /* carve */
    struct t *g2(unsigned char *z) { struct t *x = (struct t *)&z[8]; return x; } /* carve */
    struct t *g3(void) { struct t *x; x = (struct t *)arena; return x; }         /* carve */
    struct t *g4(void *v) { struct t *x = (char *)v + 4; return x; }              /* carve */
    struct t *g5(struct u *u) { return (struct t *)(void *)&u->m; }              /* view */
    struct t *g6(struct u *u) { return (struct t *)u; }                          /* view */
    struct t *g7(void) { return (struct t *)get(4); }                            /* call */
    struct t *g8(void *v) { struct t *x = v; return x; }                         /* read */
    struct t *g9(void) { return (struct t *)0; }                                 /* int */
    int g10(char *p) { return (struct t *)(p + 1) == 0; }                        /* not stored */
    """
    _, report = instrument_preprocessed(src, "c", TraceConfig(types=["t"], entry=[]))
    assert report.carves == 4
    # noted as registered sites (one note per type and line), g7 as item 1's
    assert {n.kind for n in report.site_notes} == {"carve", "unsized"}
