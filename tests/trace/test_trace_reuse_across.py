"""A block carved across a registered array's elements makes the array stale.

An object is carved out of one object: when a typed block is registered inside a
registered array of another type and crosses its elements, the array's memory was given
back without cachefit seeing it (SQLite's lookaside taking a Mem array back and handing
the memory out again for a cursor) and the array is forgotten, instead of being kept as
the block's container, which made every access inside the block count for both types and
take the slowest path (runtime/src/cf_core.c, cf_stale_under).
tests/trace/programs/reuse_across.c carves a 64-byte record across an array of four
24-byte objects. The profile must hold exactly the sequences below;
the array counts as reused memory (the raw trace's `reused` line, a note of `cachefit
trace`), unless the function that gave it back is named in [trace] deallocators.
"""

from __future__ import annotations

from pathlib import Path

from test_trace_nested import kinds
from trace_helpers import build, needs_clang

from cachefit.model.profile_merge import merge_metadata
from cachefit.trace.raw_trace import guard_notes

R = "r"
EXPECTED = {
    "obj": {("use_array", ((0, 8, 8, R), (1, 0, 4, R)), None): 1},
    "wide": {("use_wide", ((0, 0, 8, R), (0, 40, 8, R)), None): 2},
}



@needs_clang
def test_block_across_elements_makes_the_array_stale(tmp_path: Path) -> None:
    # clang only: what is tested is the registry's (the same code for both compilers)
    b = build(tmp_path, ["reuse_across.c"], types=["obj", "wide"],
              entry=["use_array", "use_wide"], flags=("-O2", "-g"))
    prof = b.trace()
    assert {t: kinds(prof, t) for t in ("obj", "wide")} == EXPECTED
    # The array was forgotten when the new block came: reused memory, and a note that says
    # what to name (the record carved again over itself, of its own type, is not).
    assert prof.metadata["reused"] == {"obj": 1}
    assert [n for n in guard_notes(prof) if n.startswith("obj: ")] == [
        "obj: 1 object of obj was still registered when memory for another type was "
        "allocated over it (it was given back without a free cachefit saw, as to a pool or "
        "a lookaside list; until it was handed out again, what used it counted for it); "
        "name the function that gives such blocks back in [trace] deallocators in "
        "cachefit.toml"]
    assert b.run() == "1\n"


@needs_clang
def test_named_deallocator_leaves_nothing_to_reuse(tmp_path: Path) -> None:
    """The same program giving the array back through pool_put, named in [trace]
    deallocators: it is forgotten there, so nothing is reused and no note is printed."""
    b = build(tmp_path, ["reuse_across.c"], types=["obj", "wide"],
              entry=["use_array", "use_wide"], flags=("-O2", "-g", "-DGIVE_BACK"),
              config_extra='deallocators = ["pool_put"]\n')
    prof = b.trace()
    assert {t: kinds(prof, t) for t in ("obj", "wide")} == EXPECTED
    assert "reused" not in prof.metadata
    assert not [n for n in guard_notes(prof) if "still registered" in n]


def test_reused_counts_add_up_when_profiles_merge() -> None:
    """`profile merge` sums the reused objects per type; a profile without them had none."""
    meta = merge_metadata([{"reused": {"obj": 1}}, {"reused": {"obj": 2, "wide": 1}}, {}])
    assert meta["reused"] == {"obj": 3, "wide": 1}
    assert "reused" not in merge_metadata([{}, {"reused": {}}])
