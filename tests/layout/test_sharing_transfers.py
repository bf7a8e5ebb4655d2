"""layout/sharing.transfers: expected line transfers of a layout and their blame, on a
hand-made TypeSharing whose figures are computed by hand in the comments."""

from __future__ import annotations

import pytest

from cachefit.layout.sharing import PairBlame, fields_of, transfers
from cachefit.model.profile import FieldSpan, Handoff, TypeSharing

# Traced layout: two per-thread counters, a read-mostly block and a lock in one line.
TRACED = [FieldSpan("c0", 0, 8), FieldSpan("c1", 8, 8), FieldSpan("cfg", 16, 32),
          FieldSpan("lock", 48, 4)]
SIZES = {f.name: f.size for f in TRACED}
SHARING = TypeSharing(
    granule=1, threads=2,
    handoffs=[
        # thread 1 read cfg and wrote c1 after thread 0 wrote c0
        Handoff(100, written=((0, 8),), touched=((8, 8), (16, 32))),
        # and the other way round
        Handoff(100, written=((8, 8),), touched=((0, 8), (16, 32))),
        # the lock, written by both
        Handoff(5, written=((48, 4),), touched=((48, 4),)),
    ])


def _offsets(**offsets: int) -> dict[str, tuple[int, int]]:
    return {name: (off, SIZES[name]) for name, off in offsets.items()}


def test_fields_of_maps_overlapping_ranges() -> None:
    assert fields_of(((0, 16),), TRACED) == ("c0", "c1")
    assert fields_of(((12, 8),), TRACED) == ("c1", "cfg")
    assert fields_of(((52, 4),), TRACED) == ()          # tail padding


def test_all_in_one_line_every_handoff_moves_one_line() -> None:
    fig = transfers(SHARING, _offsets(c0=0, c1=8, cfg=16, lock=48), TRACED, None, 64)
    assert fig.transfers == 205.0
    assert [h.lines for h in fig.handoffs] == [1.0, 1.0, 1.0]
    assert fig.handoffs[0].written_fields == ("c0",)
    assert fig.handoffs[0].touched_fields == ("c1", "cfg")
    assert fig.pairs == (PairBlame("c0", "c1", 100.0), PairBlame("c0", "cfg", 100.0),
                         PairBlame("c1", "c0", 100.0), PairBlame("c1", "cfg", 100.0),
                         PairBlame("lock", "lock", 5.0))
    assert fig.per_operation(410) == 0.5


def test_counters_on_their_own_lines_leave_only_the_lock() -> None:
    # cfg [0,32), lock [32,36) on line 0; c0 on line 1; c1 on line 2
    fig = transfers(SHARING, _offsets(cfg=0, lock=32, c0=64, c1=128), TRACED, None, 64)
    assert fig.transfers == 5.0
    assert [h.transfers for h in fig.handoffs] == [0.0, 0.0, 5.0]
    assert fig.pairs == (PairBlame("lock", "lock", 5.0),)


def test_expected_over_observed_starts() -> None:
    # c0 [0,8) lock [8,12) cfg [16,48) c1 [48,56). Start 0: one line, 205. Start 16:
    # c0, lock, cfg on line 0, c1 on line 1: handoff 1 moves line 0 (cfg), handoff 2
    # nothing, the lock 1: 105. Starts {0: 1, 16: 3}: (205 + 3 * 105) / 4 = 130.
    fig = transfers(SHARING, _offsets(c0=0, lock=8, cfg=16, c1=48), TRACED,
                    {0: 1, 16: 3}, 64)
    assert fig.transfers == 130.0
    assert [h.lines for h in fig.handoffs] == [1.0, 0.25, 1.0]
    blame = {(p.written, p.touched): p.transfers for p in fig.pairs}
    assert blame == {("c0", "cfg"): 100.0, ("c0", "c1"): 25.0, ("c1", "c0"): 25.0,
                     ("c1", "cfg"): 25.0, ("lock", "lock"): 5.0}
    # offsets modulo the line: 80 is 16
    assert transfers(SHARING, _offsets(c0=0, lock=8, cfg=16, c1=48), TRACED,
                     {0: 1, 80: 3}, 64).transfers == 130.0


def test_fields_missing_from_the_layout_hold_no_line() -> None:
    fig = transfers(SHARING, _offsets(c0=0, cfg=16, lock=48), TRACED, None, 64)
    # handoff 1 still meets cfg; handoff 2's written field c1 is gone
    assert [h.transfers for h in fig.handoffs] == [100.0, 0.0, 5.0]


@pytest.mark.parametrize("line", [32, 64])
def test_a_field_across_two_lines(line: int) -> None:
    sharing = TypeSharing(granule=1, threads=2,
                          handoffs=[Handoff(3, written=((0, 8),), touched=((8, 64),))])
    traced = [FieldSpan("a", 0, 8), FieldSpan("big", 8, 64)]
    # a [24,32), big [32,96): line 32: a on line 0, big on 1-2: none; line 64: both on 0
    fig = transfers(sharing, {"a": (24, 8), "big": (32, 64)}, traced, None, line)
    assert fig.transfers == (0.0 if line == 32 else 3.0)
