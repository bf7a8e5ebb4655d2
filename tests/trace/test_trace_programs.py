"""Profile builds of small C and C++ programs whose access sequences are known exactly.

Each program is built with `cachefit cc`/`c++` in profile mode (at -O0 so every access
in the source is a load or store) and traced with `cachefit trace`; the profile must
hold exactly the expected quadruples (role, offset, size, mode), roles and counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_nested import entry_counts
from trace_helpers import CACHEFIT, build, needs_clang, needs_gcc, run, seqs

from cachefit.model.profile import Access, load

R, W = "r", "w"

OP = ((0, 8, 8, R), (1, 0, 4, W), (0, 16, 1, W))


def roles_expected() -> dict[tuple[tuple[int, int, int, str], ...], int]:
    return {
        OP: 7,                  # 3 + 2 on globals, 1 on array elements, 1 nested in outer()
        ((0, 8, 8, R), (0, 0, 4, W), (0, 16, 1, W)): 1,  # op(&g1, &g1): one object
        ((0, 0, 4, W), (0, 8, 8, W), (1, 8, 8, R), (0, 0, 4, W), (1, 16, 1, W)): 1,  # outer
    }


@needs_clang
def test_roles_counts_nesting_and_outside_accesses(tmp_path: Path) -> None:
    b = build(tmp_path, ["roles.c"], types=["obj"], entry=["op", "outer"])
    prof = b.trace()
    assert seqs(prof, "obj") == roles_expected()
    # the op() inside outer() is an invocation of op of its own, and part of outer()'s
    assert prof.invocations == 9
    assert {s.entry for s in prof.types["obj"].sequences} == {"op", "outer"}
    t = prof.types["obj"]
    assert (t.size, t.runaway, t.outside_objects) == (24, 0, 0)
    assert [(f.name, f.offset, f.size) for f in t.fields] == [
        ("a", 0, 4), ("pad", 4, 4), ("b", 8, 8), ("c", 16, 1)]
    assert prof.metadata["backend"] == "compile-time"
    assert prof.metadata["instrumentation"] == "sanitizer-coverage"
    assert prof.metadata["entry"] == ["op", "outer"]
    assert entry_counts(prof) == {"op": 8, "outer": 1}


@needs_gcc
def test_gcc_tsan_backend_gives_the_same_profile(tmp_path: Path) -> None:
    b = build(tmp_path, ["roles.c"], types=["obj"], entry=["op", "outer"], compiler="gcc")
    prof = b.trace()
    assert seqs(prof, "obj") == roles_expected()
    assert prof.invocations == 9
    assert prof.metadata["instrumentation"] == "tsan"


@needs_clang
def test_strided_array_from_debug_info(tmp_path: Path) -> None:
    b = build(tmp_path, ["strided.c"], types=["obj"], entry=["push"])
    prof = b.trace()
    assert seqs(prof, "obj") == {
        ((0, 0, 4, W), (1, 8, 8, W), (0, 16, 1, W)): 2,
        ((0, 0, 4, W), (0, 8, 8, W), (0, 16, 1, W)): 1,
    }
    assert prof.types["obj"].outside_objects == 6   # two stack writes per push


@needs_clang
def test_heap_objects_freed_and_address_reused(tmp_path: Path) -> None:
    b = build(tmp_path, ["heap.c"], types=["obj"], entry=["bump", "peek", "pair"])
    out = b.run()
    assert out.startswith("reused 1 1"), "malloc did not reuse the chunk; the test proves nothing"
    prof = b.trace()
    assert seqs(prof, "obj") == {
        ((0, 8, 8, R), (0, 8, 8, W)): 3,               # before and after the reuse
        ((0, 16, 1, W), (1, 0, 4, W)): 2,              # calloc'd array, then realloc'd
        ((0, 16, 1, W), (0, 0, 4, W)): 1,
    }
    assert prof.invocations == 7


@needs_clang
def test_two_threads_allocating_and_tracing(tmp_path: Path) -> None:
    b = build(tmp_path, ["threads.c"], types=["obj"], entry=["op"], flags=("-O0", "-g",
                                                                          "-pthread"))
    prof = b.trace()
    assert seqs(prof, "obj") == {((0, 0, 4, R), (0, 0, 4, W), (0, 16, 1, W)): 40000}
    assert prof.invocations == 40000


@needs_clang
def test_long_invocations_are_summaries_not_runaway(tmp_path: Path) -> None:
    b = build(tmp_path, ["runaway.c"], types=["obj"], entry=["spin", "many"],
              config_extra="max_accesses = 100\nmax_objects = 8\n")
    prof = b.trace()
    t = prof.types["obj"]
    assert {(s.entry, s.count, s.accesses, s.hits) for s in t.sequences} == {
        ("spin", 1, tuple(Access(0, 0, 4, W) for _ in range(10)), None),
        # 1000 and 5000 writes: one summary, hits added up
        ("spin", 2, (Access(0, 0, 4, W),), (6000,)),
        ("many", 1, (Access(0, 16, 1, W), Access(1, 16, 1, W), Access(2, 16, 1, W)), None),
        # 10 objects, max_objects 8: the first 8 are kept, and the invocation counted
        ("many", 1, tuple(Access(i, 16, 1, W) for i in range(8)), None),
    }
    assert t.runaway == 0
    assert prof.metadata["guards"] == {"types": {"obj": {"objects": 1, "distinct": 0}}}
    assert prof.invocations == 5


@needs_clang
def test_trace_says_nothing_was_cut_off(tmp_path: Path) -> None:
    b = build(tmp_path, ["runaway.c"], types=["obj"], entry=["spin", "many"],
              config_extra="max_accesses = 100\nmax_objects = 8\n")
    proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", str(b.program)], tmp_path, b.env)
    assert "runaway" not in proc.stderr, proc.stderr
    assert "wrote p.json: 5 invocations" in proc.stderr


@needs_clang
def test_trace_limits_on_the_command_line(tmp_path: Path) -> None:
    b = build(tmp_path, ["runaway.c"], types=["obj"], entry=["spin", "many"],
              config_extra="max_accesses = 100\n")
    run([*CACHEFIT, "trace", "--max-accesses", "1000", "-o", "p.json", "--", str(b.program)],
        tmp_path, b.env)
    prof = load(tmp_path / "p.json")
    assert prof.types["obj"].runaway == 0
    # 1000 writes fit max_accesses: a literal sequence; 5000 do not: a summary
    assert tuple((0, 0, 4, W) for _ in range(1000)) in seqs(prof, "obj")
    assert [s.hits for s in prof.types["obj"].sequences if s.hits] == [(5000,)]


@needs_clang
def test_fork_parent_and_child(tmp_path: Path) -> None:
    b = build(tmp_path, ["forks.c"], types=["obj"], entry=["op"])
    prof = b.trace()
    assert seqs(prof, "obj") == {((0, 8, 8, R), (0, 8, 8, W)): 6}
    assert prof.invocations == 6
    assert prof.metadata["processes"] == 2


@needs_clang
def test_public_annotations(tmp_path: Path) -> None:
    b = build(tmp_path, ["macros.c"], types=["obj"], entry=["op", "poke"])
    prof = b.trace()
    assert seqs(prof, "obj") == {((0, 16, 1, W),): 2, ((0, 0, 4, W),): 1}
    assert prof.types["obj"].outside_objects == 1
    assert prof.invocations == 5   # 3 op, 1 poke, 1 hand-marked


@needs_clang
@pytest.mark.parametrize("compiler", ["clang-19", "gcc"])
def test_address_reused_by_another_type_between_invocations(tmp_path: Path,
                                                            compiler: str) -> None:
    # The runtime takes an invocation's first object to be the previous invocation's
    # role 0 without a lookup while the registry is unchanged; a forget and a new
    # registration at the same address must end that.
    b = build(tmp_path, ["reuse.c"], types=["obj", "other"], entry=["touch"],
              compiler=compiler)
    prof = b.trace()
    touch = ((0, 8, 8, R), (0, 16, 4, W))
    assert seqs(prof, "obj") == {touch: 5}      # 3 at mem, 1 at mem + 64, 1 at mem again
    assert seqs(prof, "other") == {touch: 2}
    assert prof.invocations == 8
    assert prof.types["other"].outside_objects == prof.types["obj"].outside_objects == 0


@needs_clang
def test_cxx_constructors_new_delete_static_and_stack(tmp_path: Path) -> None:
    b = build(tmp_path, ["tcb.cc"], types=["tcb", "msg"], entry=["ipc", "touch"],
              compiler="clang++-19", cxx=True)
    prof = b.trace()
    assert seqs(prof, "tcb") == {((0, 8, 8, R), (1, 0, 8, W), (0, 120, 8, W),
                                  (1, 120, 8, R)): 6}
    assert seqs(prof, "msg") == {((0, 4, 4, R),): 2}
    assert prof.invocations == 8
    assert prof.types["tcb"].size == 128


@needs_gcc
def test_cxx_with_gcc(tmp_path: Path) -> None:
    b = build(tmp_path, ["tcb.cc"], types=["tcb", "msg"], entry=["ipc", "touch"],
              compiler="g++", cxx=True)
    prof = b.trace()
    assert seqs(prof, "tcb") == {((0, 8, 8, R), (1, 0, 8, W), (0, 120, 8, W),
                                  (1, 120, 8, R)): 6}
    assert seqs(prof, "msg") == {((0, 4, 4, R),): 2}


@needs_gcc
def test_gcc_atomics_stay_atomic_and_are_traced(tmp_path: Path) -> None:
    b = build(tmp_path, ["atomics.c"], types=["cnt"], entry=["inc"], compiler="gcc",
              flags=("-O2", "-g", "-pthread"))
    prof = b.trace()
    assert b.run().strip() == "100000"
    # The atomic add is a read and a write (as in the QEMU backend).
    assert seqs(prof, "cnt") == {((0, 0, 8, R), (0, 0, 8, W), (0, 8, 8, W)): 100000}


@needs_clang
def test_clang_does_not_see_atomic_read_modify_write(tmp_path: Path) -> None:
    # sanitizer coverage instruments loads and stores only: the atomic add is invisible.
    b = build(tmp_path, ["atomics.c"], types=["cnt"], entry=["inc"],
              flags=("-O2", "-g", "-pthread"))
    prof = b.trace()
    assert seqs(prof, "cnt") == {((0, 8, 8, W),): 100000}


@needs_clang
def test_configured_allocators(tmp_path: Path) -> None:
    b = build(tmp_path, ["custom_alloc.c"], types=["obj"], entry=["op"],
              config_extra='allocators = ["pool_get"]\ndeallocators = ["pool_put"]\n')
    prof = b.trace()
    assert seqs(prof, "obj") == {((0, 8, 8, W),): 2}
    assert prof.invocations == 3


@needs_clang
def test_allowlist_limits_instrumentation(tmp_path: Path) -> None:
    b = build(tmp_path, ["roles.c"], types=["obj"], entry=["op", "outer"],
              config_extra='instrument = ["op", "outer"]\n')
    prof = b.trace()
    expected = roles_expected()
    # helper() is not instrumented: its write inside outer() disappears.
    del expected[((0, 0, 4, W), (0, 8, 8, W), (1, 8, 8, R), (0, 0, 4, W), (1, 16, 1, W))]
    expected[((0, 0, 4, W), (1, 8, 8, R), (0, 0, 4, W), (1, 16, 1, W))] = 1
    assert seqs(prof, "obj") == expected


@needs_clang
@pytest.mark.parametrize("opt", ["-O2"])
def test_optimized_build_traces_the_same_fields(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["heap.c"], types=["obj"], entry=["bump", "peek", "pair"],
              flags=(opt, "-g"))
    prof = b.trace()
    counted = sum(seqs(prof, "obj").values())
    assert counted == 6 and prof.invocations == 7


@needs_clang
def test_trace_written_on_request(tmp_path: Path) -> None:
    b = build(tmp_path, ["dump_signal.c"], types=["obj"], entry=["op"])
    raw = tmp_path / "raw"
    raw.mkdir()
    env = dict(b.env, CACHEFIT_TRACE_DIR=str(raw), CACHEFIT_DUMP_SIGNAL="USR2")
    run([str(b.program)], tmp_path, env)
    run([*CACHEFIT, "profile", "import", str(raw), "-o", "p.json"], tmp_path, b.env)
    prof = load(tmp_path / "p.json")
    assert prof.invocations == 4
    assert seqs(prof, "obj") == {((0, 16, 1, W),): 4}


@needs_clang
def test_allocator_size_in_a_local_variable_with_offsetof(tmp_path: Path) -> None:
    """Lua's strings: `total = offsetof(str, contents) + (l + 1) * sizeof(char);
    newobj(tag, total)`; the objects are registered (they were not: the size was not
    `sizeof`-based and sat in a variable), and only between allocation and free."""
    b = build(tmp_path, ["flex_alloc.c"], types=["str"], entry=["hashof"],
              config_extra='allocators = ["newobj"]\ndeallocators = ["freeobj"]\n')
    assert b.run().strip() == "19"
    prof = b.trace()
    assert seqs(prof, "str") == {((0, 12, 4, R), (0, 9, 1, R)): 2}
    assert prof.invocations == 2
