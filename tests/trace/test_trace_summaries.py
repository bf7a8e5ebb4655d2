"""Long invocations are never dropped (issue 26): summaries of invocations longer than
max_accesses, their deduplication, and the memory guards.

tests/trace/programs/long_ops.c is built in profile mode at -O0 and traced with
max_accesses = 100, max_objects = 4 and max_distinct = 3: an invocation of at most 100
accesses is a literal sequence as before; a longer one is a summary (each distinct access
once, in first-occurrence order, with its hits), whatever the number of times its buffer
was compacted; equal summaries of one kind are counted together with their hits summed; a
short invocation nested in a long one keeps its literal sequence; objects beyond
max_objects and distinct accesses beyond max_distinct are left out, said in the profile's
`guards`, and the invocation is still counted; with the table of distinct sequences full
(max_sequences), new ones are folded into one summary per kind.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import Key, entry_counts, kinds
from trace_helpers import CACHEFIT, build, needs_clang, needs_gcc, run

from cachefit.model.profile import Profile, TypeProfile, load
from cachefit.model.project_config import parse_config
from cachefit.trace.raw_trace import guard_notes, parse_raw

R, W = "r", "w"
LIMITS = "max_accesses = 100\nmax_objects = 4\n"
ENTRIES = ["scan", "driver", "poke", "many", "wide"]

EXPECTED: dict[Key, int] = {
    ("scan", ((0, 0, 4, R), (0, 8, 8, W)) * 10 + ((1, 16, 1, W),), None): 1,
    # 121, 121 and 1001 accesses: one summary, hits summed
    ("scan", ((0, 0, 4, R), (0, 8, 8, W), (1, 16, 1, W)), (620, 620, 3)): 3,
    ("driver", ((0, 8, 8, W), (1, 0, 4, W)), (300, 300)): 1,
    ("poke", ((0, 0, 4, W),), None): 300,
    # arr[4] and arr[5] are beyond max_objects
    ("many", ((0, 16, 1, W), (1, 16, 1, W), (2, 16, 1, W), (3, 16, 1, W), (0, 0, 4, W)),
     None): 1,
    # (0, 4, 4, w) is beyond max_distinct
    ("wide", ((0, 0, 4, W), (0, 8, 8, W), (0, 16, 1, W)), (40, 40, 40)): 1,
}


@pytest.mark.parametrize("compiler", [
    pytest.param("clang-19", marks=needs_clang),
    pytest.param("gcc", marks=needs_gcc),
])
def test_long_invocations_become_summaries(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["long_ops.c"], types=["obj"], entry=ENTRIES, compiler=compiler,
              config_extra=LIMITS)
    b.env["CACHEFIT_MAX_DISTINCT"] = "3"
    prof = b.trace()
    assert kinds(prof, "obj") == EXPECTED
    assert entry_counts(prof) == {"scan": 4, "driver": 1, "poke": 300,
                                                  "many": 1, "wide": 1}
    assert prof.invocations == 307
    t = prof.types["obj"]
    assert (t.runaway, t.outside_objects, t.table_full) == (0, 0, 0)
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 1, "distinct": 1}}}
    # every access made in an invocation was recorded (the 2 to arr[4], arr[5] were not)
    assert prof.metadata["overhead"]["recorded_accesses"] == 21 + 121 + 121 + 1001 + 600 \
        + 5 + 160


@needs_clang
def test_raw_trace_version_2_lines(tmp_path: Path) -> None:
    b = build(tmp_path, ["long_ops.c"], types=["obj"], entry=ENTRIES, config_extra=LIMITS)
    raw_dir = tmp_path / "raw"
    raw_dir.mkdir()
    b.env["CACHEFIT_TRACE_DIR"] = str(raw_dir)
    b.env["CACHEFIT_MAX_DISTINCT"] = "3"
    b.run()
    (path,) = raw_dir.glob("cachefit-*.raw")
    text = path.read_text()
    assert text.startswith("cachefit-raw 2\n")
    lines = text.splitlines()
    assert "max_distinct 3" in lines and "deep 0" in lines
    assert "stat 0 0 0 1 1" in lines
    assert "sum 0 0 3 3 0:0:4:r:620 0:8:8:w:620 1:16:1:w:3" in lines
    assert "seq 0 2 300 1 0:0:4:w" in lines
    raw = parse_raw(path)
    assert raw.version == 2 and raw.guards == {0: (1, 1)}
    assert sorted((s.entry, s.count) for s in raw.sequences) == [
        (0, 1), (0, 3), (1, 1), (2, 300), (3, 1), (4, 1)]


@needs_clang
def test_equal_summaries_from_two_processes_merge(tmp_path: Path) -> None:
    b = build(tmp_path, ["long_ops.c"], types=["obj"], entry=ENTRIES, config_extra=LIMITS)
    b.env["CACHEFIT_MAX_DISTINCT"] = "3"
    prof = b.trace(command=["sh", "-c", f"{b.program} && {b.program}"])
    doubled = {k: 2 * c for k, c in EXPECTED.items()}
    got = kinds(prof, "obj")
    # a summary's hits are summed over both processes
    key = ("scan", ((0, 0, 4, R), (0, 8, 8, W), (1, 16, 1, W)), (1240, 1240, 6))
    assert got.pop(key) == 6
    doubled.pop(("scan", ((0, 0, 4, R), (0, 8, 8, W), (1, 16, 1, W)), (620, 620, 3)))
    key = ("driver", ((0, 8, 8, W), (1, 0, 4, W)), (600, 600))
    assert got.pop(key) == 2
    doubled.pop(("driver", ((0, 8, 8, W), (1, 0, 4, W)), (300, 300)))
    key = ("wide", ((0, 0, 4, W), (0, 8, 8, W), (0, 16, 1, W)), (80, 80, 80))
    assert got.pop(key) == 2
    doubled.pop(("wide", ((0, 0, 4, W), (0, 8, 8, W), (0, 16, 1, W)), (40, 40, 40)))
    assert got == doubled
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 2, "distinct": 2}}}


@needs_clang
def test_a_full_table_still_keeps_a_summary(tmp_path: Path) -> None:
    """max_sequences = 2: the literal scan() and the scan() summary fit; every later new
    sequence or summary is folded into one summary per kind, and counted as table full."""
    b = build(tmp_path, ["long_ops.c"], types=["obj"], entry=ENTRIES, config_extra=LIMITS)
    b.env["CACHEFIT_MAX_DISTINCT"] = "3"
    b.env["CACHEFIT_MAX_SEQUENCES"] = "2"
    prof = b.trace()
    assert kinds(prof, "obj") == {
        ("scan", ((0, 0, 4, R), (0, 8, 8, W)) * 10 + ((1, 16, 1, W),), None): 1,
        ("scan", ((0, 0, 4, R), (0, 8, 8, W), (1, 16, 1, W)), (620, 620, 3)): 3,
        ("driver", ((0, 8, 8, W), (1, 0, 4, W)), (300, 300)): 1,
        ("poke", ((0, 0, 4, W),), (300,)): 300,
        # folded as well: max_distinct (3) keeps the first three
        ("many", ((0, 16, 1, W), (1, 16, 1, W), (2, 16, 1, W)), (1, 1, 1)): 1,
        ("wide", ((0, 0, 4, W), (0, 8, 8, W), (0, 16, 1, W)), (40, 40, 40)): 1,
    }
    assert prof.types["obj"].table_full == 300 + 1 + 1 + 1
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 1, "distinct": 2}}}
    assert prof.invocations == 307


@needs_clang
def test_guards_that_fired_are_noted_with_the_setting_to_raise(tmp_path: Path) -> None:
    """max_distinct and max_sequences from cachefit.toml (max_distinct reaches the runtime
    through the blob, no environment variable): `cachefit trace` prints one note per
    guard that fired, with what was lost and the [trace] key to raise (issue 26)."""
    b = build(tmp_path, ["long_ops.c"], types=["obj"], entry=ENTRIES,
              config_extra=LIMITS + "max_distinct = 3\nmax_sequences = 2\n")
    proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", str(b.program)], tmp_path, b.env)
    prof = load(tmp_path / "p.json")
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 1, "distinct": 2}}}
    assert prof.types["obj"].table_full == 303
    notes = [line for line in proc.stderr.splitlines() if line.startswith("cachefit: note:")]
    assert notes == [f"cachefit: note: {n}" for n in guard_notes(prof)]
    assert len(notes) == 3
    assert notes[0].startswith("cachefit: note: obj: in 1 invocation, objects beyond "
                               "max_objects were left out")
    assert notes[0].endswith("raise [trace] max_objects in cachefit.toml")
    assert notes[1].startswith("cachefit: note: obj: 2 summaries of long invocations "
                               "reached max_distinct")
    assert notes[1].endswith("raise [trace] max_distinct in cachefit.toml")
    assert notes[2].startswith("cachefit: note: obj: 303 invocations did not fit")
    assert notes[2].endswith("raise [trace] max_sequences in cachefit.toml")
    assert "runaway" not in proc.stderr


def test_guard_notes_of_deep_entries_and_none() -> None:
    prof = Profile(types={"obj": TypeProfile(name="obj", size=24)},
                   metadata={"guards": {"deep": 5}})
    (note,) = guard_notes(prof)
    assert note.startswith("5 entry function calls nested deeper than the runtime's 8")
    assert guard_notes(Profile(types={"obj": TypeProfile(name="obj", size=24)})) == []


def test_max_distinct_in_cachefit_toml() -> None:
    cfg = parse_config('[trace]\ntypes = ["obj"]\nentry = ["op"]\nmax_distinct = 3\n',
                       Path("cachefit.toml"))
    assert cfg.trace.max_distinct == 3
    assert parse_config('[trace]\ntypes = ["obj"]\n',
                        Path("cachefit.toml")).trace.max_distinct == 65536
