"""Threads' sharing of objects in the raw trace and its conversion (issue 30).

tests/trace/programs/share.c runs a fixed script of invocations on two threads that take
turns (a mutex and a condition variable), built in profile mode at -O0; its raw traces are
read with cachefit.trace.raw_trace, and once through `cachefit trace` (a saved profile,
version 3). Expected values are computed by hand from the script: struct obj is 24 bytes
(granule 1); `a` is 0:4, `b` 8:8, `c` 16:1. Also: the sharing lines parsed, clipped and
summed from hand-written raw files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import Built, build, needs_clang, needs_gcc, run

from cachefit.errors import UserError
from cachefit.model.profile import (
    Handoff,
    Profile,
    SharedObject,
    TypeSharing,
    check_type_profile,
)
from cachefit.trace.raw_trace import collect_raw_files, parse_raw, profile_from_raw

ENTRIES = ["put_a", "get_a_put_b", "get_b_put_a", "get_a", "get_b", "own", "long_op",
           "outer"]
A, B = (0, 4), (8, 8)

# Thread 0 wrote `a` before tracking began (not seen). Tracked: thread 1 reads a, writes b
# (no handoff: nothing written yet); thread 0 reads b, writes a (handoff b / a+b); thread 1
# reads a, writes b (a / a+b); thread 0 reads b, writes a (b / a+b, the second); thread 1
# reads a twice (a / a once: then charged); thread 0 reads b (its own writes). Each thread
# also wrote `c` of its own object once.
PINGPONG = TypeSharing(
    granule=1, threads=2, private_objects=2, lost=0,
    shared=[SharedObject(1, reads=((0, *B), (1, *A)), writes=((0, *A), (1, *B)))],
    handoffs=[Handoff(2, written=(B,), touched=(A, B)),
              Handoff(1, written=(A,), touched=(A,)),
              Handoff(1, written=(A,), touched=(A, B))])


def build_share(tmp: Path, compiler: str = "clang-19", extra: str = "",
                flags: tuple[str, ...] = ("-O0", "-g")) -> Built:
    return build(tmp, ["share.c"], types=["obj"], entry=ENTRIES, compiler=compiler,
                 config_extra=extra, flags=flags)


def run_raw(b: Built, mode: str, times: int = 1) -> tuple[Profile, list[str]]:
    """Run the program `times` times in `mode`; the profile of its raw traces and their
    sharing lines."""
    raw = b.directory / f"raw-{mode}"
    raw.mkdir()
    for _ in range(times):
        run([str(b.program), mode], b.directory, dict(b.env, CACHEFIT_TRACE_DIR=str(raw)))
    files = collect_raw_files([raw])
    assert len(files) == times
    lines = [line for f in files for line in f.read_text().splitlines()
             if line.split(" ")[0] in ("threads", "share", "shobj", "handoff")]
    prof = profile_from_raw(files)
    check_type_profile(prof.types["obj"])   # the profile's rules for sharing hold
    return prof, lines


@needs_clang
def test_two_threads_taking_turns(tmp_path: Path) -> None:
    b = build_share(tmp_path)
    prof, lines = run_raw(b, "pingpong")
    assert prof.types["obj"].sharing == PINGPONG
    assert lines[:3] == ["threads 2", "share 0 1 2 2 0",
                         "shobj 0 1 r:0:8:8 w:0:0:4 r:1:0:4 w:1:8:8"]
    assert sorted(lines[3:]) == ["handoff 0 1 0:4 / 0:4", "handoff 0 1 0:4 / 0:4,8:8",
                                 "handoff 0 2 8:8 / 0:4,8:8"]
    # The sequences are today's: tracking adds nothing to them.
    assert prof.invocations == 10


@needs_clang
def test_two_threads_taking_turns_at_o2_with_inlined_checks(tmp_path: Path) -> None:
    b = build_share(tmp_path, flags=("-O2", "-g"))
    prof, _ = run_raw(b, "pingpong")
    assert prof.types["obj"].sharing == PINGPONG


@needs_gcc
def test_two_threads_taking_turns_with_gcc_through_cachefit_trace(tmp_path: Path) -> None:
    b = build_share(tmp_path, compiler="gcc")
    assert b.trace("pingpong").types["obj"].sharing == PINGPONG


@needs_clang
def test_processes_are_summed(tmp_path: Path) -> None:
    b = build_share(tmp_path)
    prof, _ = run_raw(b, "pingpong", times=2)
    # Thread numbers are each process's: the same patterns, counted twice.
    assert prof.types["obj"].sharing == TypeSharing(
        granule=1, threads=2, private_objects=4, lost=0,
        shared=[SharedObject(2, o.reads, o.writes) for o in PINGPONG.shared],
        handoffs=[Handoff(2 * h.count, h.written, h.touched) for h in PINGPONG.handoffs])


@needs_clang
def test_own_objects_only_are_private(tmp_path: Path) -> None:
    b = build_share(tmp_path)
    prof, lines = run_raw(b, "private")
    # Thread 0's first invocation preceded tracking; its second and both of thread 1's
    # were tracked: two objects, one thread each.
    assert prof.types["obj"].sharing == TypeSharing(granule=1, threads=2, private_objects=2)
    assert lines == ["threads 2", "share 0 1 2 2 0"]


@needs_clang
def test_long_invocation_read_from_its_summary(tmp_path: Path) -> None:
    # max_accesses 16: long_op's 101 accesses fold; its read of `a`, first, is only in the
    # summary; the object's first thread-0 invocation (own) preceded tracking.
    b = build_share(tmp_path, extra="max_accesses = 16\n")
    prof, _ = run_raw(b, "long")
    assert any(s.hits is not None for s in prof.types["obj"].sequences)
    assert prof.types["obj"].sharing == TypeSharing(
        granule=1, threads=2, private_objects=1,
        shared=[SharedObject(1, reads=((0, *B), (1, *A)), writes=((1, *B),))],
        handoffs=[Handoff(1, written=(B,), touched=(B,))])


@needs_clang
def test_only_the_outermost_end_counts(tmp_path: Path) -> None:
    # Thread 1's `outer` writes `a` in a nested invocation of put_a, then reads `b` that
    # thread 0 wrote: one handoff of `b` to what the whole invocation touched (ended
    # separately, put_a would have taken it with `a` alone).
    b = build_share(tmp_path)
    prof, _ = run_raw(b, "nested")
    assert prof.types["obj"].sharing == TypeSharing(
        granule=1, threads=2, private_objects=1,
        shared=[SharedObject(1, reads=((0, *A), (1, *B)), writes=((0, *B), (1, *A)))],
        handoffs=[Handoff(1, written=(B,), touched=(A, B))])
    assert prof.metadata["entry_invocations"]["put_a"] == 1   # nested, recorded


@needs_clang
def test_objects_beyond_the_table_are_lost(tmp_path: Path) -> None:
    # The runtime keeps 49,152 objects: thread 1's own object, then 49,151 of the 50,000
    # array elements it touches; the 849 others and the shared object thread 0 reads
    # last find the table full.
    b = build_share(tmp_path)
    prof, lines = run_raw(b, "many")
    assert lines == ["threads 2", "share 0 1 2 49152 850"]
    assert prof.types["obj"].sharing == TypeSharing(granule=1, threads=2,
                                                    private_objects=49152, lost=850)


@needs_clang
def test_single_thread_has_no_sharing(tmp_path: Path) -> None:
    b = build_share(tmp_path)
    prof, lines = run_raw(b, "single")
    assert prof.types["obj"].sharing is None
    assert lines == []
    # The same invocations as on two threads, recorded the same way.
    two, _ = run_raw(b, "pingpong")
    assert [(s.entry, s.accesses, s.count) for s in prof.types["obj"].sequences] == \
        [(s.entry, s.accesses, s.count) for s in two.types["obj"].sequences]


# ---------------------------------------------------------------- hand-written raw files

BLOB_LAYOUT = ('layout {"types": {"big": {"size": 600, "fields": []}}, "entry": ["op"], '
               '"instrumentation": "sancov"}')


def raw_file(path: Path, sharing: str) -> Path:
    blob = f"CACHEFIT-BLOB-1\ntype big\nentry op\n{BLOB_LAYOUT}"
    path.write_text("cachefit-raw 2\npid 1\ninvocations 0\n"
                    f"blob {len(blob)}\n{blob}\ntype 0 big\nentry 0 0 op\n{sharing}end\n")
    return path


def test_ranges_clipped_to_the_size(tmp_path: Path) -> None:
    # 600 bytes: granule 4 (600 <= 256 * 4). 592:16 is cut to 592:8; a pattern left with
    # one thread counts as private; a handoff with nothing written left is dropped; equal
    # patterns after cutting are added up.
    f = raw_file(tmp_path / "cachefit-1.raw",
                 "threads 3\nshare 0 4 3 5 1\n"
                 "shobj 0 2 r:0:0:8 w:1:592:16\n"
                 "shobj 0 1 r:0:0:8 w:1:592:12\n"
                 "shobj 0 3 r:0:4:4 w:2:600:4\n"
                 "handoff 0 7 592:16 / 0:4,592:16\n"
                 "handoff 0 1 600:8 / 0:4\n")
    raw = parse_raw(f)
    assert raw.threads == 3
    assert profile_from_raw([f]).types["big"].sharing == TypeSharing(
        granule=4, threads=3, private_objects=8, lost=1,
        shared=[SharedObject(3, reads=((0, 0, 8),), writes=((1, 592, 8),))],
        handoffs=[Handoff(7, written=((592, 8),), touched=((0, 4), (592, 8)))])


def test_threads_cover_the_numbers_in_the_patterns(tmp_path: Path) -> None:
    # Threads 1 and 2 touched the type while sharing was tracked, thread 0 only before.
    f = raw_file(tmp_path / "cachefit-1.raw",
                 "threads 3\nshare 0 4 2 0 0\nshobj 0 1 w:1:0:4 r:2:0:4\n")
    sharing = profile_from_raw([f]).types["big"].sharing
    assert sharing == TypeSharing(granule=4, threads=3,
                                  shared=[SharedObject(1, ((2, 0, 4),), ((1, 0, 4),))])


def test_granules_must_agree(tmp_path: Path) -> None:
    one = raw_file(tmp_path / "cachefit-1.raw", "threads 2\nshare 0 4 2 1 0\n")
    two = raw_file(tmp_path / "cachefit-2.raw", "threads 2\nshare 0 8 2 1 0\n")
    with pytest.raises(UserError, match="cachefit-2.raw: type big: sharing was tracked in "
                                        "granules of 8 bytes, not 4"):
        profile_from_raw([one, two])


def test_summed_with_a_process_without_sharing(tmp_path: Path) -> None:
    one = raw_file(tmp_path / "cachefit-1.raw",
                   "threads 2\nshare 0 4 2 1 0\nhandoff 0 2 0:4 / 0:4\n")
    two = raw_file(tmp_path / "cachefit-2.raw", "")
    assert profile_from_raw([one, two]).types["big"].sharing == TypeSharing(
        granule=4, threads=2, private_objects=1, handoffs=[Handoff(2, ((0, 4),), ((0, 4),))])
    assert profile_from_raw([two]).types["big"].sharing is None


@pytest.mark.parametrize("lines", [
    "shobj 0 1 r:0:0:4\n",                       # before its share line
    "share 0 3 2 1 0\n",                         # granule not a power of two
    "share 0 4 2 1 0\nshobj 0 1 r:0:2:4\n",      # not in granules
    "share 0 4 2 1 0\nshobj 0 1 x:0:0:4\n",      # mode
    "share 0 4 2 1 0\nshobj 0 1 r:16:0:4\n",     # thread slot beyond 15
    "share 0 4 2 1 0\nhandoff 0 1 0:4 0:4\n",    # no '/'
    "share 0 4 2 1 0\nhandoff 0 0 0:4 / 0:4\n",  # count 0
    "share 0 4 2 1 0\nshare 0 4 2 1 0\n",        # twice
])
def test_malformed_sharing_lines(tmp_path: Path, lines: str) -> None:
    f = raw_file(tmp_path / "cachefit-1.raw", "threads 2\n" + lines)
    with pytest.raises(UserError, match="not a cachefit raw trace"):
        parse_raw(f)
