"""Reading a profile type entry: mapping accesses to fields, roles, modes; merging.

Profiles are built by hand here; these tests do not run the tracer or the profile tool.
"""

from __future__ import annotations

from layout_synth import access, c_layout, profile_entry, typed

from cachefit.layout import evaluate_order, optimize_layout
from cachefit.layout.merging import merge_by_inclusion
from cachefit.layout.profile_footprints import read_footprints
from cachefit.model.record_layout import Field, Record


def test_accesses_map_through_the_stored_layout_to_current_names() -> None:
    old = c_layout("s", [("a", "long", 8, 8), ("b", "long", 8, 8), ("c", "int", 4, 4)])
    entry = profile_entry(old, [(2, [[0, 0, 8, "r"], [1, 10, 2, "w"], [1, 15, 2, "r"]])])
    # The record has been reordered since the trace: offsets differ, names match.
    new = c_layout("s", [("c", "int", 4, 4), ("b", "long", 8, 8), ("a", "long", 8, 8)])
    fps = read_footprints(new, typed(entry), 0)
    (seq,) = fps.sequences
    roles = dict(seq.roles)
    assert roles["0"].touched == {"a"} and roles["0"].written == frozenset()
    assert roles["1"].touched == {"b", "c"}      # [15, 17) straddles b and c
    assert roles["1"].written == {"b"}
    assert fps.access_shapes["b"] == {(2, 2)}
    assert "b" in fps.straddled and "c" in fps.straddled
    assert fps.warnings == ()


def test_unknown_and_new_fields_are_reported_not_fatal() -> None:
    old = c_layout("s", [("gone", "long", 8, 8), ("a", "long", 8, 8)])
    entry = profile_entry(old, [(1, [[0, 0, 8, "r"], [0, 8, 8, "r"], [0, 40, 4, "r"]])])
    new = c_layout("s", [("a", "long", 8, 8), ("fresh", "long[2]", 16, 8)])
    fps = read_footprints(new, typed(entry), 0)
    assert dict(fps.sequences[0].roles)["0"].touched == {"a"}
    text = " ".join(fps.warnings)
    assert "gone" in text and "fresh" in text and "size" in text
    assert fps.unmapped_accesses == 2


def test_fixed_area_accesses_are_kept_as_spans() -> None:
    record = Record("D", "class", 24, 8, [Field("x", "long", 8, 8, 8),
                                          Field("y", "long", 16, 8, 8)], vptr_offset=0)
    entry = profile_entry(record, [(1, [[0, 0, 8, "r"], [0, 16, 8, "r"]])])
    fps = read_footprints(record, typed(entry), 8)
    role = dict(fps.sequences[0].roles)["0"]
    assert role.fixed_touched == ((0, 8),) and role.touched == {"y"}
    # The vptr's line counts: with 16-byte lines, y next to the vptr saves a line.
    result = optimize_layout(record, typed(entry), cache_line=16, object_align=16)
    assert result.lines_before == 2.0 and result.lines_after == 1.0
    assert result.offsets["y"] == 8


def test_the_profiles_vptr_and_base_spans_are_the_fixed_area() -> None:
    """A traced C++ class lists its vtable pointer (`<vptr>`) and base members (`DB::n`) as
    fields of the profile; they are the fixed area, not fields missing from the record
    (leveldb's DBImpl: "profile fields not in the record: <vptr DB>", and each access to the
    vptr counted as hitting no field)."""
    record = Record("D", "class", 32, 8, [Field("x", "long", 16, 8, 8),
                                          Field("y", "long", 24, 8, 8)], vptr_offset=0)
    entry = profile_entry(record, [(3, [[0, 0, 8, "r"], [0, 8, 4, "w"], [0, 24, 8, "r"]])])
    entry["fields"][:0] = [{"name": "<vptr>", "offset": 0, "size": 8},
                           {"name": "DB::n", "offset": 8, "size": 4}]
    fps = read_footprints(record, typed(entry), 16)
    role = dict(fps.sequences[0].roles)["0"]
    assert role.fixed_touched == ((0, 12),) and role.fixed_written == ((8, 12),)
    assert role.touched == {"y"}
    assert fps.unmapped_accesses == 0
    assert fps.warnings == ()


def inclusion_profile() -> tuple[Record, dict]:
    record = c_layout("s", [(n, "char[24]", 24, 8) for n in "abcdef"])
    heavy = [access(record, 0, n) for n in "abcd"] + [access(record, 1, "a")]
    light = [access(record, 0, n, "w") for n in "bd"] + [access(record, 1, "a")]
    other = [access(record, 0, n) for n in "ef"]
    return record, profile_entry(record, [(10, heavy), (3, light), (5, other)])


def test_merging_by_footprint_inclusion() -> None:
    record, entry = inclusion_profile()
    fps = read_footprints(record, typed(entry), 0)
    kept, merged = merge_by_inclusion(fps.sequences)
    assert [(m.index, m.into, m.count) for m in merged] == [(1, 0, 3)]
    assert [(s.index, s.count) for s in kept] == [(0, 13), (2, 5)]


def test_merging_needs_inclusion_role_by_role() -> None:
    record = c_layout("s", [(n, "long", 8, 8) for n in "abc"])
    heavy = [access(record, 0, "a"), access(record, 0, "b")]
    light = [access(record, 1, "a")]                     # role 1 is not in the heavy one
    fps = read_footprints(record, typed(profile_entry(record, [(9, heavy), (1, light)])), 0)
    kept, merged = merge_by_inclusion(fps.sequences)
    assert merged == () and len(kept) == 2


def test_merge_flag_reports_merges_and_predicts_on_the_full_profile() -> None:
    record, entry = inclusion_profile()
    plain = optimize_layout(record, typed(entry), object_align=64)
    merged = optimize_layout(record, typed(entry), object_align=64, merge=True)
    assert plain.merged == ()
    assert [(m.index, m.into) for m in merged.merged] == [(1, 0)]
    check = evaluate_order(record, typed(entry), merged.order, object_align=64)
    assert merged.lines_after == check.lines and merged.dirty_after == check.dirty
    assert merged.lines_before == plain.lines_before
