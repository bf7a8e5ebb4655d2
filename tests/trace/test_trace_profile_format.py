"""The profile format (docs/profile-format.md): golden file, validation, merge, show."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.trace.profile_format import (
    Access,
    AccessSequence,
    FieldSpan,
    Profile,
    TypeProfile,
    dumps,
    load,
    merge,
    save,
)
from cachefit.trace.profile_show import describe_access, render

GOLDEN = Path(__file__).parent / "golden" / "profile_v1.json"


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


def test_golden_file_is_what_save_writes(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    save(sample(), out)
    assert out.read_text() == GOLDEN.read_text()


def test_golden_file_loads_back() -> None:
    prof = load(GOLDEN)
    data = json.loads(GOLDEN.read_text())
    for key in ("format", "version", "cache_line", "invocations", "types"):
        assert key in data
    assert data["format"] == "cachefit-profile" and data["version"] == 1
    assert prof.invocations == 9
    t = prof.types["tcb"]
    assert t.sequences[0].count == 6            # heaviest first
    assert t.sequences[0].accesses[1] == Access(1, 0, 8, "w")
    assert (t.runaway, t.outside_objects, t.table_full) == (2, 5, 0)
    assert prof.metadata["backend"] == "compile-time"
    assert dumps(prof) == GOLDEN.read_text()


def test_gzip_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "p.json.gz"
    save(sample(), out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(out.read_bytes()).decode() == GOLDEN.read_text()
    assert dumps(load(out)) == GOLDEN.read_text()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="other"), '"format"'),
    (lambda d: d.update(version=2), "version 2"),
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
