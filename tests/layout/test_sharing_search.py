"""The layout objective with sharing (issue 30): optimize_layout on small hand-made
profiles with TypeSharing. Cost = lines per operation + sharing_weight * line transfers
per operation; figures computed by hand in the comments."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from layout_synth import c_layout
from sharing_cases import STATS, acc, ranges, stats_profile

from cachefit.errors import UserError
from cachefit.layout import optimize_layout
from cachefit.model.profile import (
    AccessSequence,
    FieldSpan,
    Handoff,
    TypeProfile,
    TypeSharing,
    load,
)


def _lines_of(offsets: dict[str, int], start: int = 0) -> dict[str, int]:
    return {n: (start + o) // 64 for n, o in offsets.items()}


def test_counters_every_operation_hands_off_go_to_lines_of_their_own() -> None:
    """Every operation hands the line over (1000 + 1000 + 10 of 2010). Declared: 1 line
    and 1 transfer per operation, cost 2. Counters and cfg on three lines: work0 and
    work1 touch 2 lines, sync 1: (4000 + 10) / 2010 lines and only the lock's 10
    transfers: cost (4010 + 10) / 2010 = 2 as well; at equal cost the fewer transfers
    win. lock + c0 on line 0 (16 bytes), 48 bytes of padding, cfg on line 1, 32 bytes
    (cfg ends at 96), c1 on line 2: 136 bytes, padding 80, the least for three lines."""
    res = optimize_layout(STATS, stats_profile(1000), time_limit=1.0)
    assert res.order == ("lock", "c0", "cfg", "c1")
    assert res.offsets == {"lock": 0, "c0": 8, "cfg": 64, "c1": 128}
    assert res.padding == {"cfg": 48, "c1": 32}
    assert res.size_after == 136 and res.size_before == 56
    assert res.lines_before == 1.0
    assert res.lines_after == pytest.approx(4010 / 2010)
    assert res.transfers_before == 1.0
    assert res.transfers_after == pytest.approx(10 / 2010)
    lines = _lines_of(res.offsets)
    assert len({lines["c0"], lines["c1"], lines["cfg"]}) == 3
    assert res.method.endswith("+ sharing search")
    # without cfg's 48 bytes c1 alone moves (16 bytes): cfg shares line 0 with c0, handoff
    # 1 moves it again: 1000 transfers more; without c1's 32, c1 joins cfg: 1000 more
    assert res.padding_gains == {"cfg": pytest.approx(1000 / 2010),
                                 "c1": pytest.approx(1000 / 2010)}
    data = res.to_json()
    assert data["padding"] == {"cfg": 48, "c1": 32}
    assert json.loads(json.dumps(data))["transfers_before"] == 1.0


def test_counters_at_an_observed_start_pad_to_that_starts_lines() -> None:
    """Objects start 48 bytes into a line: declared, c0 and c1 are on line 0 and cfg on
    line 1 already (2 lines per operation, 1 transfer). lock [48,52) and c1 [56,64) on
    line 0, cfg [64,96) on line 1, 32 bytes of padding, c0 at 128: line 2. The record
    grows by exactly its padding (56 + 32 = 88)."""
    res = optimize_layout(STATS, stats_profile(1000, start=48), time_limit=1.0)
    assert res.offsets == {"lock": 0, "c1": 8, "cfg": 16, "c0": 80}
    assert res.padding == {"c0": 32}
    assert res.size_after == 88 == STATS.size + 32
    assert _lines_of(res.offsets, 48) == {"lock": 0, "c1": 0, "cfg": 1, "c0": 2}
    assert res.transfers_after == pytest.approx(10 / 2010)


def test_half_the_operations_hand_off_a_split_costs_more_than_it_saves() -> None:
    """500 + 500 handoffs: at sharing_weight 1, declared costs 1 + 1010/2010; three lines
    cost 4010/2010 + 10/2010 = 2 > 1.5025: the layout stays today's, no padding. With
    sharing_weight 4 (the default): 1 + 4 * 1010/2010 = 3.01 against 4010/2010 + 40/2010
    = 2.01: split."""
    res = optimize_layout(STATS, stats_profile(500), time_limit=1.0, sharing_weight=1.0)
    assert res.order == ("c0", "c1", "cfg", "lock") and res.padding == {}
    assert res.size_after == 56
    assert res.transfers_before == res.transfers_after == pytest.approx(1010 / 2010)
    heavy = optimize_layout(STATS, stats_profile(500), time_limit=1.0, sharing_weight=4.0)
    assert heavy.padding == {"cfg": 48, "c1": 32}
    assert heavy.transfers_after == pytest.approx(10 / 2010)
    default = optimize_layout(STATS, stats_profile(500), time_limit=1.0)
    assert (default.order, default.padding) == (heavy.order, heavy.padding)


# long a, b written together by both threads; char big[64] between them.
PAIR = c_layout("pair", [("a", "long", 8, 8), ("big", "char[64]", 64, 1),
                         ("b", "long", 8, 8), ("z", "long", 8, 8)])


def test_fields_both_threads_touch_together_stay_together() -> None:
    """Both threads write a and b in each operation (the handoff: written a, b; touched
    a, b); big and z are read by thread 0 alone (no handoff touches them). Declared, a
    and b are on two lines: 2 transfers per handoff. Together on one line: 1, the least
    (one line must move); splitting them would cost one more line and one more
    transfer. No padding."""
    a = lambda n, m="r": acc(PAIR, n, m)  # noqa: E731
    tp = TypeProfile(
        "pair", PAIR.size, [FieldSpan(f.name, f.offset, f.size) for f in PAIR.fields],
        [AccessSequence(600, (a("a", "w"), a("b", "w")), "push"),
         AccessSequence(400, (a("big"), a("z")), "scan")],
        alignment={0: 1000},
        sharing=TypeSharing(8, 2, handoffs=[
            Handoff(300, ranges(PAIR, "a", "b"), ranges(PAIR, "a", "b"))]))
    res = optimize_layout(PAIR, tp, time_limit=1.0)
    lines = _lines_of(res.offsets)
    assert lines["a"] == lines["b"]
    assert res.padding == {}
    assert res.transfers_before == pytest.approx(600 / 1000)
    assert res.transfers_after == pytest.approx(300 / 1000)
    assert res.size_after == PAIR.size
    # the lines objective alone gives the same order: the sharing search changed nothing
    alone = optimize_layout(PAIR, replace(tp, sharing=None), time_limit=1.0)
    assert (alone.order, alone.offsets) == (res.order, res.offsets)
    assert not res.method.endswith("sharing search")


# tests/trace/golden/profile_v2.json's tcb, and what optimize_layout gave for it before the
# sharing term existed (b544b24).
TCB = c_layout("tcb", [("state", "long", 8, 8), ("partner", "long", 8, 8),
                       ("pad", "char[100]", 100, 1), ("queue", "long", 8, 8)])
GOLDEN = "tests/trace/golden/profile_v2.json"


def _figures(res) -> dict:  # type: ignore[no-untyped-def]
    data = res.to_json()
    del data["solver_seconds"]
    return data


def test_without_sharing_the_result_is_todays(request: pytest.FixtureRequest) -> None:
    tp = load(request.config.rootpath / GOLDEN).types["tcb"]
    assert tp.sharing is None
    today = optimize_layout(TCB, tp, time_limit=2.0)
    data = _figures(today)
    assert data["order"] == ["pad", "state", "partner", "queue"]
    assert data["offsets"] == {"pad": 0, "state": 104, "partner": 112, "queue": 120}
    assert data["method"] == "cp-sat exact (optimal)"
    assert (data["lines_before"], data["lines_after"]) == (29 / 9, 15 / 9)
    assert "padding" not in data and "transfers_before" not in data
    assert "padding_gains" not in data
    # sharing without handoffs, or a weight of 0: the same result
    quiet = replace(tp, sharing=TypeSharing(8, 2, private_objects=3))
    assert _figures(optimize_layout(TCB, quiet, time_limit=2.0)) == data
    loud = replace(tp, sharing=TypeSharing(8, 2, handoffs=[
        Handoff(50, ((0, 8),), ((8, 8),))]))
    zero = _figures(optimize_layout(TCB, loud, time_limit=2.0, sharing_weight=0.0))
    assert zero.pop("transfers_before") == zero.pop("transfers_after")
    assert zero == data


def test_a_negative_weight_is_refused() -> None:
    with pytest.raises(UserError, match="sharing weight -1.0 must be a number >= 0"):
        optimize_layout(STATS, stats_profile(10), sharing_weight=-1.0)
