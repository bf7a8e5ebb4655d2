"""The profile format (docs/profile-format.md): golden files (version 1 read, version 2
read and written), validation, merge (exact and associative), show."""

from __future__ import annotations

import base64
import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest

from cachefit.errors import UserError
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Profile,
    TypeProfile,
    dumps,
    load,
    save,
    unpack_payload,
)
from cachefit.model.profile_merge import merge
from cachefit.report.profile_show import describe_access, render

GOLDEN = Path(__file__).parent / "golden" / "profile_v1.json"
GOLDEN_V2 = Path(__file__).parent / "golden" / "profile_v2.json"
GOLDEN_V2_READABLE = Path(__file__).parent / "golden" / "profile_v2_readable.json"


def sample() -> Profile:
    tcb = TypeProfile(
        name="tcb", size=128,
        fields=[FieldSpan("state", 0, 8), FieldSpan("partner", 8, 8), FieldSpan("pad", 16, 100),
                FieldSpan("queue", 120, 8)],
        sequences=[
            AccessSequence(1, (Access(0, 0, 8, "r"),)),
            AccessSequence(6, (Access(0, 8, 8, "r"), Access(1, 0, 8, "w"),
                               Access(0, 120, 8, "w"), Access(1, 120, 8, "r"))),
        ],
        runaway=2, outside_objects=5)
    msg = TypeProfile(name="ns::msg", size=8,
                      fields=[FieldSpan("a", 0, 4), FieldSpan("b", 4, 4)],
                      sequences=[AccessSequence(2, (Access(0, 4, 4, "r"),))])
    return Profile(types={"tcb": tcb, "ns::msg": msg}, invocations=9, cache_line=64,
                   metadata={"backend": "compile-time", "instrumentation": "sanitizer-coverage",
                             "commands": [["./pingpong", "-n", "5"]], "entry": ["ipc", "touch"],
                             "date": "2026-01-01T00:00:00+00:00", "processes": 1,
                             "programs": ["/tmp/pingpong"],
                             "overhead": {"command_seconds": 0.5, "recorded_accesses": 26}})


def sample_v2() -> Profile:
    """The version 1 sample with kinds of operation: `ipc` (nested `touch` calls count
    for it too) and `touch`, a summary of two long `ipc` invocations, and the tcbs'
    alignment (`ns::msg` has none: unknown)."""
    prof = sample()
    tcb = prof.types["tcb"]
    tcb.sequences = [
        AccessSequence(5, tcb.sequences[1].accesses, "ipc"),
        AccessSequence(1, tcb.sequences[1].accesses, "touch"),
        AccessSequence(1, (Access(0, 0, 8, "r"),), "touch"),
        AccessSequence(2, (Access(0, 8, 8, "r"), Access(0, 0, 8, "w"), Access(0, 120, 8, "r")),
                       "ipc", hits=(4000, 2, 1998)),
    ]
    tcb.alignment = {0: 3, 48: 15}     # issue 26: base addresses modulo the line
    prof.types["ns::msg"].sequences = [AccessSequence(2, (Access(0, 4, 4, "r"),), "touch")]
    prof.entry_invocations = {"ipc": 7, "touch": 4}
    prof.invocations = 11
    return prof


def _blobs(text: str) -> tuple[list[str], list[bytes]]:
    """The lines of a packed profile without its packed sequences, and those unpacked."""
    lines, blobs = [], []
    for line in text.splitlines():
        if line.strip().startswith('"sequences": "'):
            blob = json.loads("{" + line.strip() + "}")["sequences"]
            blobs.append(unpack_payload(base64.b64decode(blob)))
            line = line[:line.index('"sequences"')] + '"sequences": ...'
        lines.append(line)
    return lines, blobs


def test_golden_v2_is_what_save_writes(tmp_path: Path) -> None:
    """Byte for byte but for the zstd frames (a newer zstd may compress differently): the
    MessagePack inside them is compared instead."""
    out = tmp_path / "p.json"
    save(sample_v2(), out)
    assert _blobs(out.read_text()) == _blobs(GOLDEN_V2.read_text())
    assert dumps(sample_v2(), readable=True) == GOLDEN_V2_READABLE.read_text()


def test_golden_v2_loads_back_in_both_forms() -> None:
    for path in (GOLDEN_V2, GOLDEN_V2_READABLE):
        prof = load(path)
        assert dumps(prof, readable=True) == GOLDEN_V2_READABLE.read_text()
        assert prof.entry_invocations == {"ipc": 7, "touch": 4}
        assert "entry_invocations" not in prof.metadata
        t = prof.types["tcb"]
        assert [(s.count, s.entry, s.is_summary) for s in t.sequences] == [
            (5, "ipc", False), (2, "ipc", True), (1, "touch", False), (1, "touch", False)]
        assert t.sequences[1].hits == (4000, 2, 1998)
        assert t.kinds() == {"ipc": 7, "touch": 2}
    data = json.loads(GOLDEN_V2.read_text())
    assert data["version"] == 2 and data["invocations"] == 11
    assert isinstance(data["types"]["tcb"]["sequences"], str)


def test_golden_v1_still_loads() -> None:
    prof = load(GOLDEN)
    data = json.loads(GOLDEN.read_text())
    for key in ("format", "version", "cache_line", "invocations", "types"):
        assert key in data
    assert data["format"] == "cachefit-profile" and data["version"] == 1
    assert prof.invocations == 9
    t = prof.types["tcb"]
    assert t.sequences[0].count == 6            # heaviest first
    assert t.sequences[0].accesses[1] == Access(1, 0, 8, "w")
    assert all(s.entry is None and not s.is_summary for s in t.sequences)
    assert t.kinds() == {None: 7}
    assert (t.runaway, t.outside_objects, t.table_full) == (2, 5, 0)
    assert prof.metadata["backend"] == "compile-time"
    # Written again, it is version 2 with the same content.
    again = load_text(dumps(prof))
    assert dumps(again, readable=True) == dumps(prof, readable=True)
    assert [s.accesses for s in again.types["tcb"].sequences] == [s.accesses for s in t.sequences]


def test_version_1_entry_invocations_become_the_core_field(tmp_path: Path) -> None:
    data = json.loads(GOLDEN.read_text())
    data["entry_invocations"] = {"ipc": 7, "touch": 2}
    (tmp_path / "p.json").write_text(json.dumps(data))
    prof = load(tmp_path / "p.json")
    assert prof.entry_invocations == {"ipc": 7, "touch": 2}
    assert "entry_invocations" not in prof.metadata
    assert json.loads(dumps(prof))["entry_invocations"] == {"ipc": 7, "touch": 2}


def test_legacy_metadata_counts_are_written_as_the_core_field() -> None:
    """A producer that still puts the per-entry counts in the metadata (raw_trace before
    issue 26) writes them as the core field."""
    prof = sample()
    prof.metadata["entry_invocations"] = {"ipc": 3}
    data = json.loads(dumps(prof))
    assert data["entry_invocations"] == {"ipc": 3}
    assert list(data).count("entry_invocations") == 1


def load_text(text: str) -> Profile:
    from cachefit.model.profile import loads
    return loads(text.encode())


def test_gzip_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "p.json.gz"
    save(sample_v2(), out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert _blobs(gzip.decompress(out.read_bytes()).decode()) == _blobs(GOLDEN_V2.read_text())
    assert dumps(load(out), readable=True) == GOLDEN_V2_READABLE.read_text()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="other"), '"format"'),
    (lambda d: d.update(version=4), "version 4"),
    (lambda d: d["types"]["tcb"]["sequences"][0].update(count=0), "count"),
    (lambda d: d["types"]["tcb"]["sequences"][0]["accesses"][0].__setitem__(3, "x"),
     "[role, offset, size, r|w]"),
    (lambda d: d.pop("invocations"), '"invocations"'),
])
def test_invalid_profiles_are_rejected(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(GOLDEN.read_text())
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as exc:
        load(bad)
    assert message in exc.value.what


def test_merge_sums_identical_sequences() -> None:
    a, b = sample(), sample()
    b.types["tcb"].sequences.append(AccessSequence(4, (Access(0, 16, 1, "w"),)))
    del b.types["ns::msg"]
    m = merge([a, b])
    assert m.invocations == 18
    counts = {s.accesses: s.count for s in m.types["tcb"].sequences}
    assert counts[sample().types["tcb"].sequences[1].accesses] == 12
    assert counts[(Access(0, 16, 1, "w"),)] == 4
    assert m.types["tcb"].runaway == 4 and m.types["tcb"].outside_objects == 10
    assert m.types["ns::msg"].sequences[0].count == 2
    assert [s.count for s in m.types["tcb"].sequences] == [12, 4, 2]


def test_merge_sums_the_runtime_counters_in_the_metadata(tmp_path: Path) -> None:
    # Issue 26: `profile merge` dropped `guards` and `registered`, so the merged profile
    # lost the notes about objects left out and about types never registered.
    a, b = sample(), sample()
    a.metadata.update(instrumentation="sanitizer-coverage", registered={"tcb": 3, "ns::msg": 1},
                      guards={"types": {"tcb": {"objects": 2, "distinct": 0}}, "deep": 1})
    a.entry_invocations = {"op": 4, "outer": 2}
    b.metadata.update(instrumentation="sanitizer-coverage", registered={"tcb": 5},
                      guards={"types": {"tcb": {"objects": 1, "distinct": 7},
                                        "ns::msg": {"objects": 0, "distinct": 2}}})
    b.entry_invocations = {"op": 1, "close": 3}
    path = tmp_path / "m.json"
    save(merge([a, b]), path)
    m = load(path)
    assert m.metadata["guards"] == {"types": {"ns::msg": {"objects": 0, "distinct": 2},
                                              "tcb": {"objects": 3, "distinct": 7}},
                                    "deep": 1}
    assert m.metadata["registered"] == {"ns::msg": 1, "tcb": 8}
    assert m.metadata["instrumentation"] == "sanitizer-coverage"
    assert m.kind_invocations() == {"close": 3, "op": 5, "outer": 2}
    # an input without `registered` (a runtime before it): the total is unknown
    del b.metadata["registered"], b.metadata["guards"]
    m = merge([a, b])
    assert "registered" not in m.metadata
    assert m.metadata["guards"] == a.metadata["guards"]


def test_merge_refuses_different_layouts() -> None:
    a, b = sample(), sample()
    b.types["tcb"].fields[0] = FieldSpan("state", 0, 4)
    with pytest.raises(UserError, match="different layout"):
        merge([a, b], names=["a.json", "b.json"])


def test_show_uses_field_names() -> None:
    prof = load(GOLDEN)
    text = render(prof, title="p.json")
    lines = text.splitlines()
    assert lines[0].startswith("p.json: 9 invocations of ipc, touch")
    i = next(k for k, line in enumerate(lines) if line.startswith("type tcb"))
    assert "128 bytes (2 cache lines), 2 sequences, 7 counted" in lines[i]
    assert "2 runaway, 5 outside objects" in lines[i]
    assert "#1  count 6 (85.7%), 4 accesses, 2 objects" in lines[i + 1]
    assert lines[i + 2].split()[:3] == ["0", "r", "partner"]
    assert lines[i + 3].split()[:3] == ["1", "w", "state"]
    assert lines[i + 4].split()[:3] == ["0", "w", "queue"] and "line 1" in lines[i + 4]


def test_describe_access_partial_and_spanning() -> None:
    t = sample().types["tcb"]
    assert describe_access(t, Access(0, 0, 8, "r")) == "state"
    assert describe_access(t, Access(0, 2, 2, "r")) == "state+2"
    assert describe_access(t, Access(0, 0, 16, "r")) == "state..partner"
    assert describe_access(t, Access(0, 116, 4, "r")) == "<padding>"


def _packed_type(data: dict[str, Any], payload: bytes) -> None:
    import zstandard
    data["types"]["tcb"]["sequences"] = base64.b64encode(
        zstandard.ZstdCompressor().compress(payload)).decode()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(version=4), "version 4 is not supported"),
    (lambda d: d.pop("entry_invocations"), "entry_invocations"),
    (lambda d: d.update(invocations=-1), "invocations"),
    (lambda d: d["types"]["tcb"].update(sequences="not base64!"), "sequences"),
    (lambda d: d["types"]["tcb"].update(
        sequences=d["types"]["tcb"]["sequences"][:40]), "corrupt or truncated zstd data"),
    (lambda d: d["types"]["tcb"].update(sequences=base64.b64encode(b"plain").decode()),
     "corrupt or truncated zstd data"),
    (lambda d: _packed_type(d, b"\x91\x94\x00"), "sequences"),
    (lambda d: _packed_type(d, b"\x91\x94\x01\x91\x94\x00\x00\x04\xa1x\xc0\xc0"),
     "Invalid enum value 'x'"),
    (lambda d: _packed_type(d, b"\x91\x94\x00\x90\xc0\xc0"), "Expected `int` >= 1"),
    (lambda d: _packed_type(d, b"\x91\x94\x01\x91\x94\x00\x00\x04\xa1r\xc0\x92\x01\x01"),
     "one hit count per access"),
])
def test_malformed_version_2_is_a_user_error(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(GOLDEN_V2.read_text())
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as exc:
        load(bad)
    assert message in exc.value.what, exc.value.what
    assert exc.value.what.startswith(f"{bad}: ")


@pytest.mark.parametrize("cut", [2, 10, 100])
def test_truncated_files_are_user_errors(tmp_path: Path, cut: int) -> None:
    full = tmp_path / "p.json.gz"
    save(sample_v2(), full)
    bad = tmp_path / "cut.json.gz"
    bad.write_bytes(full.read_bytes()[:-cut])
    with pytest.raises(UserError, match="not a valid cachefit profile"):
        load(bad)
    plain = tmp_path / "cut.json"
    plain.write_bytes(GOLDEN_V2.read_bytes()[:-cut])
    with pytest.raises(UserError, match="invalid JSON"):
        load(plain)


def _random_profile(rng: random.Random) -> Profile:
    accs = [(Access(0, 0, 8, "r"),), (Access(0, 8, 8, "w"),),
            (Access(0, 0, 8, "r"), Access(1, 8, 8, "w")), (Access(1, 16, 4, "r"),)]
    seqs = []
    for _ in range(rng.randint(0, 6)):
        acc = rng.choice(accs)
        summary = rng.random() < 0.4
        hits = tuple(rng.randint(1, 9) for _ in acc) if summary else None
        seqs.append(AccessSequence(rng.randint(1, 5), acc, rng.choice([None, "ipc", "touch"]),
                                   hits))
    t = TypeProfile("obj", 24, [FieldSpan("a", 0, 8), FieldSpan("b", 8, 8),
                                FieldSpan("c", 16, 8)], seqs, runaway=rng.randint(0, 2))
    kinds = {e: rng.randint(0, 9) for e in rng.sample(["ipc", "touch"], rng.randint(0, 2))}
    return Profile({"obj": t}, invocations=rng.randint(0, 20), entry_invocations=kinds,
                   metadata={"entry": sorted(kinds), "processes": 1})


def _content(p: Profile) -> dict[str, Any]:
    data = p.to_json()
    data.pop("date", None)
    return data


def test_merge_is_exact_and_associative() -> None:
    rng = random.Random(26)
    for _ in range(50):
        a, b, c = (_random_profile(rng) for _ in range(3))
        flat = merge([a, b, c])
        left = merge([merge([a, b]), c])
        right = merge([a, merge([b, c])])
        assert _content(left) == _content(flat) == _content(right)
        # exact: every input count and hit is in the result
        for key in ("ipc", "touch"):
            assert flat.entry_invocations.get(key, 0) == sum(
                p.entry_invocations.get(key, 0) for p in (a, b, c))
        assert flat.types["obj"].counted == sum(p.types["obj"].counted for p in (a, b, c))
        hits = sum(sum(s.hits or ()) for p in (a, b, c) for s in p.types["obj"].sequences)
        assert sum(sum(s.hits or ()) for s in flat.types["obj"].sequences) == hits


def test_merge_keeps_kinds_and_summaries_apart() -> None:
    acc = (Access(0, 0, 8, "r"), Access(0, 8, 8, "w"))
    t = TypeProfile("obj", 24, [], [AccessSequence(1, acc, "ipc"),
                                    AccessSequence(2, acc, "touch"),
                                    AccessSequence(3, acc, "ipc", (3, 5))])
    u = TypeProfile("obj", 24, [], [AccessSequence(4, acc, "ipc"),
                                    AccessSequence(1, acc, "ipc", (1, 7)),
                                    AccessSequence(1, acc)])
    m = merge([Profile({"obj": t}), Profile({"obj": u})]).types["obj"]
    got = {(s.entry, s.hits is not None): (s.count, s.hits) for s in m.sequences}
    assert got == {("ipc", False): (5, None), ("touch", False): (2, None),
                   ("ipc", True): (4, (4, 12)), (None, False): (1, None)}


# ------------------------------------------------ alignment of the objects (issue 26, item 5)

def test_alignment_loads_back_and_is_optional() -> None:
    for path in (GOLDEN_V2, GOLDEN_V2_READABLE):
        prof = load(path)
        assert prof.types["tcb"].alignment == {0: 3, 48: 15}
        assert prof.types["ns::msg"].alignment is None          # absent: unknown
    assert load(GOLDEN).types["tcb"].alignment is None         # version 1: unknown
    # a version 2 profile written before the field existed
    data = json.loads(GOLDEN_V2_READABLE.read_text())
    del data["types"]["tcb"]["alignment"]
    assert load_text(json.dumps(data)).types["tcb"].alignment is None
    text = render(load(GOLDEN_V2))
    assert "alignment: base mod 64 of 18 objects touched: 48 (83.3%), 0 (16.7%)" in text
    one = sample_v2()
    one.types["tcb"].alignment = {48: 15}
    assert "alignment: base at 48 mod 64 for all 15 objects touched" in render(one)


@pytest.mark.parametrize("value, message", [
    ({"64": 1}, "'64' is not an offset in [0, 64)"),
    ({"x": 1}, "'x' is not an offset"),
    ({"08": 1}, "'08' is not an offset"),
    ({"8": 0}, "Expected `int` >= 1"),
])
def test_bad_alignment_is_refused(tmp_path: Path, value: dict[str, int], message: str) -> None:
    data = json.loads(GOLDEN_V2_READABLE.read_text())
    data["types"]["tcb"]["alignment"] = value
    with pytest.raises(UserError) as exc:
        load_text(json.dumps(data))
    assert message in exc.value.what


def test_merge_sums_alignment() -> None:
    a, b, c = sample_v2(), sample_v2(), sample_v2()
    b.types["tcb"].alignment = {16: 2, 48: 1}
    c.types["tcb"].alignment = None
    m = merge([a, b, c])
    assert m.types["tcb"].alignment == {0: 3, 16: 2, 48: 16}
    assert list(m.types["tcb"].alignment) == [0, 16, 48]
    assert m.types["ns::msg"].alignment is None
    assert merge([c, c]).types["tcb"].alignment is None
    assert _content(merge([merge([a, b]), c])) == _content(merge([a, merge([b, c])]))


def test_raw_align_lines_become_the_profile_alignment(tmp_path: Path) -> None:
    """`align TYPE MOD:COUNT ...` (docs/raw-trace-format.md) per process, summed over
    processes; a type without an `align` line has no alignment."""
    from cachefit.trace.raw_trace import parse_raw, profile_from_raw

    def raw(pid: int, align: str) -> Path:
        path = tmp_path / f"cachefit-{pid}.raw"
        path.write_text(
            f"cachefit-raw 2\npid {pid}\ninvocations 3\nrecorded 3\n"
            "type 0 obj\ntype 1 other\nentry 0 3 op\nstat 0 0 0 0 0\nstat 1 0 0 0 0\n"
            f"{align}seq 0 0 3 1 0:0:4:r\nseq 1 0 1 1 0:0:4:r\nend\n")
        return path

    first = raw(1, "align 0 48:2 56:1\n")
    second = raw(2, "align 0 16:1 48:4\nalign 1\n")
    assert parse_raw(first).alignment == {0: {48: 2, 56: 1}}
    assert parse_raw(second).alignment == {0: {16: 1, 48: 4}, 1: {}}
    prof = profile_from_raw([first, second])
    assert prof.types["obj"].alignment == {16: 1, 48: 6, 56: 1}
    assert prof.types["other"].alignment is None
    assert profile_from_raw([first], cache_line=32).types["obj"].alignment == {16: 2, 24: 1}
    assert profile_from_raw([first], cache_line=128).types["obj"].alignment is None
    bad = raw(3, "align 0 64:1\n")
    with pytest.raises(UserError, match="bad alignment word 64:1"):
        parse_raw(bad)


def test_raw_objects_lines_become_registered_metadata(tmp_path: Path) -> None:
    """`objects TYPE REGISTERED` (issue 27) per process, summed over processes into the
    profile's `registered` metadata by type name; absent when a file has none."""
    from cachefit.trace.raw_trace import parse_raw, profile_from_raw

    def raw(pid: int, objects: str) -> Path:
        path = tmp_path / f"cachefit-{pid}.raw"
        path.write_text(
            f"cachefit-raw 2\npid {pid}\ninvocations 1\nrecorded 1\n"
            "type 0 obj\ntype 1 other\nentry 0 1 op\nstat 0 0 0 0 0\nstat 1 0 0 0 0\n"
            f"{objects}seq 0 0 1 1 0:0:4:r\nend\n")
        return path

    first = raw(1, "objects 0 3\nobjects 1 0\n")
    second = raw(2, "objects 0 2\nobjects 1 0\n")
    old = raw(3, "")
    assert parse_raw(first).registered == {0: 3, 1: 0}
    assert parse_raw(old).registered is None
    assert profile_from_raw([first, second]).metadata["registered"] == {"obj": 5, "other": 0}
    assert "registered" not in profile_from_raw([first, old]).metadata
    with pytest.raises(UserError, match="bad object count"):
        parse_raw(raw(4, "objects 0 -1\n"))
