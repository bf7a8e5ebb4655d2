"""Operations at every level (issue 26): each entry function is its own kind of operation.

Small programs in tests/trace/programs are built in profile mode (at -O0, so every access
in the source is a load or store) and traced; each kind's sequences must be exactly the
expected ones: an entry called inside another's invocation is an invocation of its own,
with roles numbered by first touch within it, and its accesses count for the enclosing
invocations too; a recursive call (direct or indirect) of an active entry is part of that
invocation; longjmp out of nested invocations ends them; nested invocations on two
threads; entries nested deeper than the runtime's frames count for the enclosing ones only.
"""

from __future__ import annotations

from pathlib import Path

from trace_helpers import build, needs_clang, needs_gcc

from cachefit.model.profile import Profile

R, W = "r", "w"

Quad = tuple[int, int, int, str]
Key = tuple[str | None, tuple[Quad, ...], tuple[int, ...] | None]


def entry_counts(profile: Profile) -> dict[str, int]:
    """Invocations per entry function (a core field of the profile from version 2 on, the
    metadata key before)."""
    counts = getattr(profile, "entry_invocations", None)
    return dict(counts) if counts else dict(profile.metadata["entry_invocations"])


def kinds(profile: Profile, type_name: str) -> dict[Key, int]:
    """Sequences of a type as {(entry, ((role, offset, size, mode), ...), hits): count}."""
    return {(s.entry, tuple((a.role, a.offset, a.size, a.mode) for a in s.accesses), s.hits):
            s.count for s in profile.types[type_name].sequences}


INNER = ((0, 8, 8, W), (1, 8, 8, R), (1, 16, 1, W))
NESTED = {
    ("inner", INNER, None): 3,          # top level, and inside both outer() calls
    ("outer", ((0, 0, 4, W), (1, 0, 4, W), (1, 8, 8, W), (0, 8, 8, R), (0, 16, 1, W),
               (0, 16, 1, W)), None): 2,
    ("rec", ((0, 0, 4, W),) * 3 + ((0, 8, 8, W), (0, 8, 8, R), (0, 16, 1, W)), None): 1,
    ("inner", ((0, 8, 8, W), (0, 8, 8, R), (0, 16, 1, W)), None): 1,   # inner(x, x) in rec
    ("ping", ((0, 0, 4, W), (0, 8, 8, W), (0, 0, 4, W), (0, 8, 8, W)), None): 1,
    ("pong", ((0, 8, 8, W), (0, 0, 4, W), (0, 8, 8, W)), None): 1,
}
NESTED_ENTRIES = ["inner", "outer", "rec", "ping", "pong"]


@needs_clang
def test_nested_entries_renumber_and_count_for_both(tmp_path: Path) -> None:
    b = build(tmp_path, ["nested.c"], types=["obj"], entry=NESTED_ENTRIES)
    prof = b.trace()
    assert kinds(prof, "obj") == NESTED
    assert entry_counts(prof) == {"inner": 4, "outer": 2, "rec": 1,
                                                  "ping": 1, "pong": 1}
    assert prof.invocations == 9
    assert prof.types["obj"].runaway == 0
    assert "guards" not in prof.metadata


@needs_gcc
def test_nested_entries_with_gcc_tsan(tmp_path: Path) -> None:
    b = build(tmp_path, ["nested.c"], types=["obj"], entry=NESTED_ENTRIES, compiler="gcc")
    prof = b.trace()
    assert kinds(prof, "obj") == NESTED
    assert prof.invocations == 9


@needs_clang
def test_nested_entries_at_o2_with_inlined_checks(tmp_path: Path) -> None:
    b = build(tmp_path, ["nested.c"], types=["obj"], entry=NESTED_ENTRIES,
              flags=("-O2", "-g"))
    assert b.run() == "2 0 1\n"
    prof = b.trace()
    assert kinds(prof, "obj") == NESTED


@needs_clang
def test_longjmp_out_of_nested_invocations(tmp_path: Path) -> None:
    b = build(tmp_path, ["nested_longjmp.c"], types=["obj"],
              entry=["catcher", "thrower", "runner", "reader"])
    prof = b.trace()
    assert kinds(prof, "obj") == {
        # catcher's end (after the longjmp back into it) ends thrower's invocation first
        ("catcher", ((0, 0, 4, W), (1, 8, 8, W)), None): 1,
        ("thrower", ((0, 8, 8, W),), None): 2,
        # left by the longjmp to main: ended when reader() begins, not part of it
        ("runner", ((0, 16, 1, W), (0, 8, 8, W)), None): 1,
        ("reader", ((0, 8, 8, R), (0, 0, 4, W)), None): 1,
    }
    assert entry_counts(prof) == {"catcher": 1, "thrower": 2, "runner": 1,
                                                  "reader": 1}


@needs_clang
def test_nested_invocations_on_two_threads(tmp_path: Path) -> None:
    b = build(tmp_path, ["nested_threads.c"], types=["obj"], entry=["op", "leaf"],
              flags=("-O0", "-g", "-pthread"))
    prof = b.trace()
    assert kinds(prof, "obj") == {
        ("op", ((0, 0, 4, R), (0, 0, 4, W), (1, 16, 1, W), (0, 16, 1, W)), None): 10000,
        ("leaf", ((0, 16, 1, W),), None): 20000,
    }
    assert prof.invocations == 30000


@needs_clang
def test_entries_deeper_than_the_frames_count_for_the_enclosing_ones(tmp_path: Path) -> None:
    entries = [f"e{i}" for i in range(1, 10)]
    b = build(tmp_path, ["deep_entries.c"], types=["obj"], entry=entries)
    prof = b.trace()
    expected: dict[Key, int] = {(f"e{k}", ((0, 0, 4, W),) * (10 - k), None): 1
                                for k in range(1, 9)}
    expected[("e9", ((0, 0, 4, W),), None)] = 1        # the call from main only
    assert kinds(prof, "obj") == expected
    assert entry_counts(prof) == {e: 1 for e in entries}
    assert prof.metadata["guards"] == {"deep": 1}


@needs_clang
def test_nested_invocations_get_their_objects_beyond_the_enclosing_max_objects(
        tmp_path: Path) -> None:
    """outer() holds max_objects (64) objects after 32 iterations; the 38 inner()
    invocations after that, and wide() nested in the last one, still record their own
    objects (roles of the innermost invocation that touched them, while it runs), which
    the enclosing invocations lose and count as beyond max_objects."""
    b = build(tmp_path, ["nested_objects.c"], types=["obj"],
              entry=["outer", "inner", "wide"])
    assert b.run() == "69\n"
    prof = b.trace()
    outer = tuple(q for i in range(32)
                  for q in ((2 * i, 0, 4, W), (2 * i + 1, 8, 8, W), (2 * i + 1, 16, 1, W)))
    assert kinds(prof, "obj") == {
        ("outer", outer, None): 1,
        # the last one lost wide()'s objects: roles of wide()'s invocation only
        ("inner", ((0, 8, 8, W), (0, 16, 1, W)), None): 71,
        ("wide", ((0, 16, 1, W), (1, 16, 1, W), (2, 16, 1, W)), None): 1,
    }
    assert entry_counts(prof) == {"outer": 1, "inner": 71, "wide": 1}
    assert prof.invocations == 73
    # the invocations that lost objects, once each: outer (arr[32..69], fresh[32..69],
    # arr2) and the last inner (arr2)
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 2, "distinct": 0}}}
    # each access recorded once: outer's 96, inner's 2 each beyond the 32nd (38 * 2 + 2
    # from main's call), wide's 3 writes
    assert prof.metadata["overhead"]["recorded_accesses"] == 96 + 38 * 2 + 2 + 3
