"""The chosen layout honours C's rules and the caller's constraints, and rejects bad input.

Optima under constraints are checked against the independent brute-force oracle; the
tests do not inspect solver internals.
"""

from __future__ import annotations

import random

import pytest
from layout_synth import Oracle, access, c_layout, profile_entry, random_case, typed

from cachefit.errors import UserError
from cachefit.layout import (
    LayoutConstraints,
    SameSideConstraint,
    UnitConstraint,
    optimize_layout,
)
from cachefit.model.record_layout import Base, Field, Record


@pytest.mark.parametrize("seed", range(10))
def test_alignment_and_size_limit_on_random_records(seed: int) -> None:
    rng = random.Random(500 + seed)
    record, entry = random_case(rng, max_fields=12)
    result = optimize_layout(record, typed(entry), cache_line=32, time_limit=2.0)
    fields = {f.name: f for f in record.fields}
    assert sorted(result.order) == sorted(fields)
    for name, offset in result.offsets.items():
        assert offset % fields[name].align == 0, name
    spans = sorted((result.offsets[n], result.offsets[n] + fields[n].size) for n in fields)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert result.size_after <= -(-record.size // 32) * 32 == result.size_limit
    assert result.size_after % record.align == 0
    assert result.lines_lower_bound <= result.lines_after + 1e-9
    assert result.lines_after <= result.lines_before + 1e-9


def test_holes_shrink_and_cold_fields_keep_their_order() -> None:
    record = c_layout("s", [("a", "char", 1, 1), ("b", "long", 8, 8), ("c", "char", 1, 1),
                            ("d", "long", 8, 8), ("e", "char", 1, 1)])
    assert record.size == 40
    entry = profile_entry(record, [(1, [access(record, 0, "b")])])
    result = optimize_layout(record, typed(entry))
    assert result.size_after == 24
    # 24 bytes needs d after all the chars: one cold pair (d, e) must swap, no more
    assert [n for n in result.order if n != "b"] == ["a", "c", "e", "d"]


def test_pins_keep_their_offset_and_the_optimum_respects_them() -> None:
    for seed in range(6):
        rng = random.Random(900 + seed)
        record, entry = random_case(rng, max_fields=7)
        pinned = rng.choice(record.fields)
        cons = LayoutConstraints(pins=(pinned.name,))
        result = optimize_layout(record, typed(entry), cache_line=32, object_align=32,
                                 constraints=cons)
        assert result.offsets[pinned.name] == pinned.offset
        oracle = Oracle(record, entry, cache_line=32, object_align=32)
        best = oracle.best(lambda _o, offs, f=pinned: offs[f.name] == f.offset)
        assert oracle.cost(result.order) == best


def test_unit_first_and_same_side_constraints_with_brute_force() -> None:
    rng = random.Random(77)
    record, entry = random_case(rng, max_fields=7)
    while len(record.fields) < 6:
        record, entry = random_case(rng, max_fields=7)
    n = [f.name for f in record.fields]
    cons = LayoutConstraints(units=(UnitConstraint((n[3], n[1]), "one macro"),),
                             first=n[2],
                             same_side=(SameSideConstraint(n[4], (n[0], n[5])),))
    result = optimize_layout(record, typed(entry), cache_line=16, object_align=16, constraints=cons)
    order = list(result.order)
    assert order[0] == n[2]
    assert order.index(n[1]) == order.index(n[3]) + 1
    assert order.index(n[0]) < order.index(n[4]) < order.index(n[5])

    def valid(o: tuple[str, ...], _offs: dict[str, int]) -> bool:
        return (o[0] == n[2] and o.index(n[1]) == o.index(n[3]) + 1
                and o.index(n[0]) < o.index(n[4]) < o.index(n[5]))

    oracle = Oracle(record, entry, cache_line=16, object_align=16)
    assert oracle.cost(result.order) == oracle.best(valid)
    assert any("one macro" in c for c in result.constraints_honoured)


def test_same_side_of_a_byte_boundary() -> None:
    record = c_layout("s", [(f"f{i}", "long", 8, 8) for i in range(16)])
    hot = ["f0", "f9", "f12", "f15"]
    entry = profile_entry(record, [(1, [access(record, 0, h) for h in hot])])
    free = optimize_layout(record, typed(entry), object_align=64)
    assert free.lines_after == 1.0
    cons = LayoutConstraints(same_side=(SameSideConstraint(64, ("f0", "f9")),))
    kept = optimize_layout(record, typed(entry), object_align=64, constraints=cons)
    assert kept.offsets["f0"] + 8 <= 64 and kept.offsets["f9"] >= 64
    assert kept.lines_after == 2.0


def test_flexible_array_member_stays_last() -> None:
    fields = [Field("n", "int", 0, 4, 4), Field("a", "long", 8, 8, 8),
              Field("pad", "char[20]", 16, 20, 1), Field("data", "char []", 36, 0, 1)]
    record = Record("msg", "struct", 40, 8, fields)
    entry = profile_entry(record, [(4, [[0, 36, 4, "w"], [0, 16, 1, "r"], [0, 0, 4, "r"]])])
    result = optimize_layout(record, typed(entry), cache_line=16, object_align=16)
    assert result.order[-1] == "data"
    last = max(result.offsets[f.name] + f.size for f in fields[:-1])
    assert result.offsets["data"] == last
    assert result.size_after <= 48


def bitfield_record() -> Record:
    return Record("bf", "struct", 40, 8, [
        Field("c", "char", 0, 1, 1),
        Field("p", "long", 8, 8, 8),
        Field("a", "unsigned", 16, 4, 4, bit_offset=128, bit_size=3),
        Field("b", "unsigned", 16, 4, 4, bit_offset=131, bit_size=5),
        Field("w", "unsigned", 17, 4, 4, bit_offset=136, bit_size=10),
        Field("x", "int", 20, 4, 4),
        Field("q", "long", 24, 8, 8),
        Field("t", "char", 32, 1, 1),
        Field("u", "int", 36, 4, 4, bit_offset=288, bit_size=4),
    ])


def test_bitfield_storage_units_move_as_a_whole() -> None:
    record = bitfield_record()
    entry = profile_entry(record, [(3, [[0, 16, 1, "w"], [0, 0, 1, "r"], [0, 36, 1, "r"],
                                        [1, 32, 1, "r"], [1, 16, 4, "r"]])])
    result = optimize_layout(record, typed(entry), cache_line=16, object_align=16)
    order = list(result.order)
    i = order.index("a")
    assert order[i:i + 3] == ["a", "b", "w"]
    assert result.offsets["a"] % 4 == 0
    for name in ("a", "b", "w"):
        f = record.field_named(name)
        assert f is not None and f.bit_offset is not None
        old = f.bit_offset - 8 * 16
        assert result.bit_offsets[name] - 8 * result.offsets["a"] == old
    assert result.offsets["u"] % 4 == 0
    assert any("a, b, w" in c for c in result.constraints_honoured)


def test_plain_field_sharing_a_storage_unit_moves_with_it() -> None:
    record = Record("s", "struct", 16, 8, [
        Field("c", "char", 0, 1, 1), Field("f", "int", 0, 4, 4, bit_offset=8, bit_size=4),
        Field("p", "long", 8, 8, 8)])
    entry = profile_entry(record, [(1, [[0, 8, 8, "r"]]), (1, [[0, 1, 1, "w"]])])
    result = optimize_layout(record, typed(entry))
    order = list(result.order)
    assert order.index("f") == order.index("c") + 1
    assert result.offsets["f"] == result.offsets["c"]


def test_relaxed_alignment_only_where_every_access_allows_it() -> None:
    # C++ class with a 4-byte base: a and b are only ever read as two 4-byte words, so
    # they may start right after the base; c is read as a whole 8-byte word.
    record = Record("D", "class", 32, 8, [Field("a", "long", 8, 8, 8),
                                          Field("b", "long", 16, 8, 8),
                                          Field("c", "long", 24, 8, 8)],
                    bases=[Base("B", 0, 4)])
    accesses = [[0, 0, 4, "r"], [0, 8, 4, "r"], [0, 12, 4, "w"], [0, 16, 4, "r"],
                [0, 20, 4, "r"], [1, 24, 8, "r"]]
    entry = profile_entry(record, [(3, accesses)])
    natural = optimize_layout(record, typed(entry), cache_line=16, object_align=4)
    relaxed = optimize_layout(record, typed(entry), cache_line=16, object_align=4, relax_align=True)
    assert natural.offsets == {"a": 8, "b": 16, "c": 24}
    assert relaxed.lines_after < natural.lines_after
    assert relaxed.offsets["a"] == 4 and relaxed.offsets["c"] % 8 == 0
    assert relaxed.relaxed_alignment == {"a": 4, "b": 4}
    assert relaxed.offsets["b"] % 4 == 0


def test_allow_growth_lifts_the_size_limit() -> None:
    record, entry = random_case(random.Random(3), max_fields=6)
    strict = optimize_layout(record, typed(entry), cache_line=32)
    grown = optimize_layout(record, typed(entry), cache_line=32, allow_growth=True)
    assert strict.size_limit == -(-record.size // 32) * 32
    assert grown.size_limit >= strict.size_limit
    assert grown.lines_after <= strict.lines_after


@pytest.mark.parametrize("cons, message", [
    (LayoutConstraints(pins=("nope",)), "unknown field"),
    (LayoutConstraints(units=(UnitConstraint(("f0", "f1")), UnitConstraint(("f0", "f2")))),
     "contradicts"),
    (LayoutConstraints(units=(UnitConstraint(("f0", "f1")), UnitConstraint(("f1", "f0")))),
     "cycle"),
    (LayoutConstraints(units=(UnitConstraint(("f0",)),)), "at least two"),
])
def test_bad_constraints_are_user_errors(cons: LayoutConstraints, message: str) -> None:
    record = c_layout("s", [(f"f{i}", "int", 4, 4) for i in range(4)])
    entry = profile_entry(record, [(1, [access(record, 0, "f0")])])
    with pytest.raises(UserError, match=message):
        optimize_layout(record, typed(entry), constraints=cons)


def test_unsatisfiable_first_and_pin_is_a_user_error() -> None:
    record = c_layout("s", [(f"f{i}", "int", 4, 4) for i in range(4)])
    entry = profile_entry(record, [(1, [access(record, 0, "f0")])])
    with pytest.raises(UserError, match="pinned"):
        optimize_layout(record, typed(entry), constraints=LayoutConstraints(pins=("f2",),
                                                                     first="f2"))


def test_unions_and_virtual_bases_are_refused() -> None:
    union = Record("u", "union", 8, 8, [Field("a", "long", 0, 8, 8),
                                        Field("b", "int", 0, 4, 4)])
    with pytest.raises(UserError, match="union"):
        optimize_layout(union, typed(profile_entry(union, [])))
    derived = Record("d", "class", 24, 8, [Field("a", "long", 8, 8, 8)],
                     bases=[Base("V", 16, 8, virtual=True)], vptr_offset=0)
    with pytest.raises(UserError, match="virtual bases"):
        optimize_layout(derived, typed(profile_entry(derived, [])))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("object_align", [None, 64])
def test_asserted_size_bounds_match_brute_force(seed: int, object_align: int | None) -> None:
    """`max_size`/`min_size` (from `static_assert(sizeof(T) ...)`): the optimum among the
    orders whose size is in the bounds, as brute force finds it."""
    rng = random.Random(900 + seed)
    record, entry = random_case(rng, max_fields=7)
    oracle = Oracle(record, entry, cache_line=32, object_align=object_align)
    exact = rng.random() < 0.5
    floor = record.size if exact else None
    result = optimize_layout(record, typed(entry), cache_line=32, object_align=object_align,
                             constraints=LayoutConstraints(max_size=record.size,
                                                           min_size=floor),
                             time_limit=5.0)
    assert result.size_after <= record.size
    if exact:
        assert result.size_after == record.size

    def in_bounds(order: tuple[str, ...], offsets: dict[str, int]) -> bool:
        size = oracle.offsets(order)[1]
        return size <= record.size and (floor is None or size >= floor)

    best = oracle.best(in_bounds)
    assert oracle.cost(result.order) == best
    assert result.lines_lower_bound <= oracle.per_invocation(best[0]) + 1e-9
    assert result.lines_after == pytest.approx(oracle.per_invocation(best[0]))


def test_size_bounds_bind() -> None:
    """Packing would shrink the record; an exact size keeps it; a bound below what the
    fields need is an error."""
    record = c_layout("s", [("a", "char", 1, 1), ("b", "long", 8, 8), ("c", "char", 1, 1),
                            ("d", "long", 8, 8), ("e", "char", 1, 1)])
    entry = profile_entry(record, [(1, [access(record, 0, "b"), access(record, 0, "d")])])
    assert optimize_layout(record, typed(entry)).size_after == 24
    kept = optimize_layout(record, typed(entry), constraints=LayoutConstraints(max_size=40,
                                                                        min_size=40))
    assert kept.size_after == 40
    assert any("at least 40 bytes" in c for c in kept.constraints_honoured)
    with pytest.raises(UserError, match="do not fit"):
        optimize_layout(record, typed(entry), constraints=LayoutConstraints(max_size=16))
