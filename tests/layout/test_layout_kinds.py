"""The layout objective over kinds of operation (issue 26): every sequence and every
summary is one item weighing its count, a summary's footprint being its distinct accesses;
`entry_weights` ([layout] in cachefit.toml) weighs a kind instead of its invocations; a
profile without kinds gives the layouts it always gave."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from layout_synth import c_layout, random_case, typed

from cachefit.errors import UserError
from cachefit.layout import evaluate_order, optimize_layout
from cachefit.layout.problem import WEIGHT_RESOLUTION
from cachefit.model.profile import Access, AccessSequence, FieldSpan, TypeProfile, dumps, loads
from cachefit.model.project_config import load_reorder_config


def _with_kind(tp: TypeProfile, entry: str) -> TypeProfile:
    return TypeProfile(tp.name, tp.size, list(tp.fields),
                       [AccessSequence(s.count, s.accesses, entry) for s in tp.sequences])


@pytest.mark.parametrize("seed", range(6))
def test_one_kind_and_no_kind_give_the_same_layout(seed: int) -> None:
    """A version 1 profile (no kinds), and the same written as version 2 with one kind,
    read back through the format: same order, same figures."""
    record, entry = random_case(random.Random(seed), max_fields=7)
    v1 = typed(entry)
    v2 = loads(dumps(_profile(_with_kind(v1, "op"))).encode()).types["t"]
    assert all(s.entry == "op" for s in v2.sequences)
    a = optimize_layout(record, v1, object_align=64, time_limit=2.0)
    b = optimize_layout(record, v2, object_align=64, time_limit=2.0)
    assert (a.order, a.lines_after, a.dirty_after, a.lines_lower_bound) == \
        (b.order, b.lines_after, b.dirty_after, b.lines_lower_bound)
    assert a.lines_before == b.lines_before and a.invocations == b.invocations


def _profile(tp: TypeProfile):  # type: ignore[no-untyped-def]
    from cachefit.model.profile import Profile
    return Profile({tp.name: tp}, invocations=tp.counted)


RECORD = c_layout("s", [(n, "long", 8, 8) for n in "abcd"])
FIELDS = [FieldSpan(f.name, f.offset, f.size) for f in RECORD.fields]


def acc(name: str, role: int = 0, mode: str = "r") -> Access:
    f = RECORD.field_named(name)
    assert f is not None
    return Access(role, f.offset, f.size, mode)  # type: ignore[arg-type]


def test_a_summary_weighs_its_count_with_its_distinct_accesses() -> None:
    """A summary of 3 invocations that read a and c (thousands of times) and wrote d
    weighs exactly as 3 literal invocations touching a, c and d once each."""
    literal = TypeProfile("s", 32, FIELDS, [
        AccessSequence(3, (acc("a"), acc("c"), acc("d", mode="w")), "op"),
        AccessSequence(5, (acc("b"), acc("d")), "op")])
    summary = TypeProfile("s", 32, FIELDS, [
        AccessSequence(3, (acc("a"), acc("c"), acc("d", mode="w")), "op",
                       hits=(4000, 2500, 3)),
        AccessSequence(5, (acc("b"), acc("d")), "op")])
    repeated = TypeProfile("s", 32, FIELDS, [
        AccessSequence(3, (acc("a"), acc("c"), acc("a"), acc("d", mode="w"), acc("c")), "op"),
        AccessSequence(5, (acc("b"), acc("d")), "op")])
    for order in (["a", "b", "c", "d"], ["a", "c", "d", "b"], ["b", "d", "a", "c"]):
        figs = {evaluate_order(RECORD, tp, order, cache_line=16, object_align=16).figures
                for tp in (literal, summary, repeated)}
        assert len(figs) == 1, figs
    results = [optimize_layout(RECORD, tp, cache_line=16, object_align=16, time_limit=2.0)
               for tp in (literal, summary)]
    assert results[0].order == results[1].order
    assert results[0].lines_after == results[1].lines_after
    # Weight is the count: 3 summarised invocations of {a, c} outweigh 2 literal ones of
    # {a, b}, so a and c share a line.
    contest = TypeProfile("s", 32, FIELDS, [
        AccessSequence(3, (acc("a"), acc("c")), "op", hits=(900, 900)),
        AccessSequence(2, (acc("a"), acc("b"), acc("a"), acc("b")), "op")])
    r = optimize_layout(RECORD, contest, cache_line=16, object_align=16, time_limit=2.0)
    assert r.offsets["a"] // 16 == r.offsets["c"] // 16
    assert r.lines_after == pytest.approx((3 * 1 + 2 * 2) / 5)


# Two kinds disagree: `hot` (100 invocations) reads a and b, `rare` (1 invocation) reads a
# and c. 16-byte lines hold two of the 8-byte fields.
DISAGREE = TypeProfile("s", 32, FIELDS, [
    AccessSequence(100, (acc("a"), acc("b")), "hot"),
    AccessSequence(1, (acc("a"), acc("c")), "rare")])


def _together(result, x: str, y: str) -> bool:  # type: ignore[no-untyped-def]
    return bool(result.offsets[x] // 16 == result.offsets[y] // 16)


def test_entry_weights_change_the_chosen_layout() -> None:
    kw = dict(cache_line=16, object_align=16, time_limit=2.0)
    counts = optimize_layout(RECORD, DISAGREE, **kw)  # type: ignore[arg-type]
    assert _together(counts, "a", "b") and not _together(counts, "a", "c")
    per_kind = {k.entry: k for k in counts.kinds_after}
    assert (per_kind["hot"].lines, per_kind["rare"].lines) == (1.0, 2.0)
    assert per_kind["hot"].invocations == 100 and per_kind["rare"].invocations == 1
    weighted = optimize_layout(RECORD, DISAGREE, entry_weights={"rare": 1000.0},
                               **kw)  # type: ignore[arg-type]
    assert _together(weighted, "a", "c") and not _together(weighted, "a", "b")
    per_kind = {k.entry: k for k in weighted.kinds_after}
    assert (per_kind["hot"].lines, per_kind["rare"].lines) == (2.0, 1.0)
    # the totals weigh rare 1000 and hot its 100 invocations
    assert weighted.lines_after == pytest.approx((100 * 2 + 1000 * 1) / 1100)
    # equal weights: the kinds count alike (a tie between a+b and a+c)
    even = optimize_layout(RECORD, DISAGREE, entry_weights={"hot": 1.0, "rare": 1.0},
                           **kw)  # type: ignore[arg-type]
    assert even.lines_after == pytest.approx(1.5)
    # a weight for a kind the profile does not have changes nothing
    same = optimize_layout(RECORD, DISAGREE, entry_weights={"other": 5.0},
                           **kw)  # type: ignore[arg-type]
    assert same.order == counts.order and same.lines_after == counts.lines_after


def test_weights_stay_exact_or_bounded() -> None:
    many = TypeProfile("s", 32, FIELDS, [
        AccessSequence(10**6, (acc("a"), acc("b")), "inner"),
        AccessSequence(256, (acc("a"), acc("c")), "outer"),
        AccessSequence(3, (acc("d"),), "outer")])
    r = evaluate_order(RECORD, many, ["a", "b", "c", "d"], cache_line=16, object_align=16,
                       entry_weights={"outer": 10**6})
    # outer now weighs as much as inner: (1 + (256 * 2 + 3 * 1) / 259) / 2
    assert r.lines == pytest.approx((1 + (256 * 2 + 3) / 259) / 2, rel=1e-5)
    assert WEIGHT_RESOLUTION < 2**31
    with pytest.raises(UserError, match="not a number >= 0"):
        evaluate_order(RECORD, many, ["a", "b", "c", "d"], entry_weights={"outer": -1.0})


def test_entry_weights_in_the_project_file(tmp_path: Path) -> None:
    toml = tmp_path / "cachefit.toml"
    toml.write_text('[layout]\nentry_weights = { deflate = 1.0, longest_match = 2 }\n')
    assert load_reorder_config(str(tmp_path)).entry_weights == {"deflate": 1.0,
                                                                "longest_match": 2.0}
    toml.write_text('[layout]\nentry_weights = { deflate = "high" }\n')
    with pytest.raises(UserError, match="weight of deflate must be a number >= 0"):
        load_reorder_config(str(tmp_path))
    toml.write_text('[layout]\nentry_weight = { deflate = 1 }\n')
    with pytest.raises(UserError, match=r"unknown table \[layout.entry_weight\]") as info:
        load_reorder_config(str(tmp_path))
    assert "entry_weights" in str(info.value.todo)
