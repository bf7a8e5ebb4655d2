"""The sharing search's group moves, size bound and default weight (issue 30), on the shape
of bench/threads/shared.c (tests/layout/sharing_cases.py: BENCH, bench_profile): thread k's
ops and sum are written together in every operation, so no single move or swap takes them
off the configuration's line; the lock and total sit there too. Figures by hand in the
docstrings; 2000 operations, objects at the start of a line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from sharing_cases import BENCH, CONFIG, bench_profile, compiled_offsets

from cachefit.layout import optimize_layout
from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.placement import original_placement
from cachefit.layout.problem import LayoutProblem, build_problem
from cachefit.layout.sharing import _Search, handoff_fields, search_sharing
from cachefit.model.profile import TypeProfile

# The lines objective's order (also with sharing_weight 0): thread 0's counters, the
# configuration, lock and total on line 0, thread 1's counters on line 1. Work 0 touches 1
# line, work 1 2 lines: 1.5 lines per operation. The handoffs of thread 0's counters (980
# + 10) move line 0; thread 1's counters share no line with what thread 0 touches, but
# its 10 locked handoffs write lock and total on line 0: (980 + 10 + 10) / 2000 = 0.5.
START = ("ops0", "mult", "sum0", "shift", "lock", "add", "rounds", "every", "total", "mask",
         "ops1", "sum1")
# ops0 sum0 [48] | mult add shift rounds mask every (64..100) [28] | total lock (128..140)
# [52] | ops1 sum1 (192..208): four lines, no alignment hole.
SEPARATED = ("ops0", "sum0", "mult", "add", "shift", "rounds", "mask", "every", "total",
             "lock", "ops1", "sum1")
SEPARATED_AT = {"ops0": 0, "sum0": 8, "mult": 64, "add": 72, "shift": 80, "rounds": 84,
                "mask": 88, "every": 96, "total": 128, "lock": 136, "ops1": 192, "sum1": 200}


def _problem(tp: TypeProfile) -> LayoutProblem:
    """The optimizer's problem for BENCH (optimize_layout's defaults)."""
    return build_problem(BENCH, tp, cache_line=64, object_align=None, relax_align=False,
                         constraints=LayoutConstraints(), allow_growth=False, merge=False)


def test_the_lines_objective_alone_keeps_counters_on_the_configurations_line() -> None:
    res = optimize_layout(BENCH, bench_profile(), time_limit=1.0, sharing_weight=0.0)
    assert res.order == START and res.padding == {}
    assert res.lines_after == 1.5
    assert res.transfers_before == 1.0      # declared: every handoff moves line 0 (and 1)
    assert res.transfers_after == 0.5


def test_the_written_set_moves_as_a_block_and_the_lock_gets_its_line() -> None:
    """At the default weight 4. Separated: work touches its counters' line and the
    configuration's, a locked operation the lock's too: (1960 * 2 + 40 * 3) / 2000 = 2.02
    lines; no handoff's written and touched fields share a line: 0 transfers; cost 2.02
    against the start's 1.5 + 4 * 0.5 = 3.5. With the lock on the configuration's line
    (144 bytes, 2 lines per operation) the 20 locked handoffs still move it: 2.0 + 4 *
    0.01 = 2.04. Size: 80 + 48 + 28 + 52 = 208, exactly the padding."""
    res = optimize_layout(BENCH, bench_profile(), time_limit=1.0)
    assert res.method == "cp-sat exact + sharing search"
    assert res.order == SEPARATED
    assert res.offsets == SEPARATED_AT
    assert res.padding == {"mult": 48, "total": 28, "ops1": 52}
    assert res.size_after == 208 == BENCH.size + sum(res.padding.values())
    assert res.lines_after == pytest.approx(2.02)
    assert res.transfers_after == 0.0
    lines = {n: o // 64 for n, o in res.offsets.items()}
    assert {lines[c] for c in CONFIG} == {1}
    assert (lines["ops0"], lines["sum0"], lines["lock"], lines["total"], lines["ops1"],
            lines["sum1"]) == (0, 0, 2, 2, 3, 3)
    # without mult's 48 bytes the configuration joins thread 0's counters (990 handoffs);
    # without total's 28, total and lock join it (both locked handoffs: 20); without
    # ops1's 52, ops1 follows lock at 144 (thread 0's 10 locked handoffs)
    assert res.padding_gains == {"mult": pytest.approx(990 / 2000),
                                 "total": pytest.approx(20 / 2000),
                                 "ops1": pytest.approx(10 / 2000)}


def test_single_moves_alone_stay_at_the_start() -> None:
    """The local minimum the group moves leave: with the blocks removed from the
    neighbourhood, no move, swap or break lowers the cost even at weight 10^6. The blocks
    (declared order within): each sharing signature's units (counters of one thread, the
    configuration, lock and total) and each handoff's written units."""
    tp = bench_profile()
    problem = _problem(tp)
    assert tp.sharing is not None
    start = optimize_layout(BENCH, tp, time_limit=1.0, sharing_weight=0.0)
    order = [problem.field_unit[n] for n in start.order]
    search = _Search(problem, handoff_fields(tp.sharing, tp.fields), 10.0**6, None, 20000,
                     BENCH.size)
    assert [tuple(problem.units[u].fields[0] for u in g) for g in search.groups] == [
        ("ops0", "sum0"), ("ops0", "sum0", "lock", "total"),
        ("mult", "shift", "add", "rounds", "every", "mask"), ("lock", "ops1", "sum1", "total"),
        ("lock", "total"), ("ops1", "sum1")]
    first = search.state(order, ())
    assert first is not None
    search.groups = []
    assert search.run(first).order == first.order
    found = search_sharing(problem, tp, first.placement, original_placement(problem),
                           weight=10.0**6, max_size=None, time_limit=1.0)
    assert found.improved and found.transfers_after == 0.0


def test_weight_one_keeps_the_unpadded_order() -> None:
    """At weight 1 the start costs 1.5 + 0.5 = 2.0, the separated layout 2.02: a split
    adding half a line per operation against 0.495 transfers does not pay."""
    res = optimize_layout(BENCH, bench_profile(), time_limit=1.0, sharing_weight=1.0)
    assert res.order == START and res.padding == {} and res.size_after == 80
    two = optimize_layout(BENCH, bench_profile(), time_limit=1.0, sharing_weight=2.0)
    assert (two.order, two.padding) == (SEPARATED, {"mult": 48, "total": 28, "ops1": 52})


def test_a_layout_with_alignment_holes_beyond_its_padding_is_refused() -> None:
    """The bound: size <= 80 + the padding. `lock total` on its own line leaves a 4-byte
    hole before total (lock 128..132, total 136..144; padding 48 + 28 + 48 = 124, size
    208 > 204); so does the 144-byte plan the search found before the bound (`mult shift
    add lock total rounds mask every`: 4-byte holes after shift, lock, rounds and every,
    16 bytes for 48 of padding; the last one puts ops1 at 128 without padding)."""
    tp = bench_profile()
    assert tp.sharing is not None
    problem = _problem(tp)
    search = _Search(problem, handoff_fields(tp.sharing, tp.fields), 4.0, None, 100,
                     BENCH.size)
    u = problem.field_unit

    def state(names: tuple[str, ...], breaks: tuple[str, ...], sized: bool = True
              ) -> Any:
        return search.state([u[n] for n in names], [(u[n], 0) for n in breaks], sized=sized)

    assert state(SEPARATED, ("mult", "total", "ops1")).placement.size == 208
    swapped = (*SEPARATED[:8], "lock", "total", "ops1", "sum1")
    assert state(swapped, ("mult", "lock", "ops1")) is None
    loose = state(swapped, ("mult", "lock", "ops1"), sized=False)
    assert (loose.placement.size, loose.pad) == (208, ((u["mult"], 48), (u["lock"], 28),
                                                       (u["ops1"], 48)))
    old = ("ops0", "sum0", "mult", "shift", "add", "lock", "total", "rounds", "mask",
           "every", "ops1", "sum1")
    assert state(old, ("mult",)) is None
    assert state(old, ("mult",), sized=False).placement.size == 144


COMPILERS = [c for c in ("gcc", "clang-19") if shutil.which(c)]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_the_compiler_agrees_with_the_separated_layout(tmp_path: Path, compiler: str) -> None:
    """The default weight's layout declared as the rewriter declares it (a `char
    __cachefit_pad_<field>[N];` right before the field): offsetof and sizeof are the
    predicted ones."""
    res = optimize_layout(BENCH, bench_profile(), time_limit=1.0)
    decl = {f.name: f"{f.type} {f.name}" for f in BENCH.fields}
    assert compiled_offsets(tmp_path, compiler, "shared", res.order, res.padding, decl) == \
        [SEPARATED_AT[n] for n in res.order] + [208]


def test_two_breaks_on_one_field_add_up() -> None:
    """Objects seen at two starts (0 and 32 mod 64) can get two breaks on one field; the
    second is measured after the field's own padding (zstd's ZSTDMT_jobDescription raised
    KeyError here). In START's order `mult` follows `ops0` (0..8): the break at start 0
    needs 56 bytes (mult at 64); then at start 32 mult's line offset is 32 + 64 = 96 ->
    32 more: 88 bytes, mult at 96."""
    tp = bench_profile()
    tp.alignment = {0: 5, 32: 5}
    p = _problem(tp)
    assert tp.sharing is not None
    search = _Search(p, handoff_fields(tp.sharing, tp.fields), 4.0, None, 100, p.record.size)
    order = [p.field_unit[n] for n in START]
    mult = p.field_unit["mult"]
    one = search.state(order, ((mult, 0),), sized=False)
    two = search.state(order, ((mult, 0), (mult, 32)), sized=False)
    assert one is not None and one.pad == ((mult, 56),)
    assert two is not None and two.pad == ((mult, 88),)
