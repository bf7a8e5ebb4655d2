"""Profile format version 3 (issue 30, docs/profile-format.md): the per-type `sharing` of the
threads, read and written in both forms (golden files tests/trace/golden/profile_v3*.json),
version 2 still written when no type has sharing, the sharing rules no schema states,
merging (exact and associative), and the sharing section of `cachefit profile show`.

The sample's sharing is what the runtime's rule (docs/profile-format.md, *Threads*) gives,
worked out by hand in `sample_v3`'s docstring."""

from __future__ import annotations

import base64
import copy
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from cachefit.errors import UserError
from cachefit.model import profile
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Handoff,
    Profile,
    SharedObject,
    TypeProfile,
    TypeSharing,
    check_type_profile,
    dumps,
    load,
    loads,
    save,
    unpack_payload,
)
from cachefit.model.profile_merge import merge
from cachefit.model.schema_check import schema
from cachefit.report.profile_show import render, render_sharing

GOLDEN = Path(__file__).resolve().parents[1] / "trace" / "golden"
GOLDEN_V3 = GOLDEN / "profile_v3.json"
GOLDEN_V3_READABLE = GOLDEN / "profile_v3_readable.json"
GOLDEN_V2 = GOLDEN / "profile_v2.json"
GOLDEN_V2_READABLE = GOLDEN / "profile_v2_readable.json"

STATS_FIELDS = [FieldSpan("count0", 0, 8), FieldSpan("count1", 8, 8),
                FieldSpan("config", 16, 32), FieldSpan("lock", 48, 4)]
STATS_SHARING = TypeSharing(
    granule=1, threads=2, private_objects=0,
    shared=[SharedObject(1, reads=((0, 16, 36), (1, 16, 36)),
                         writes=((0, 0, 8), (0, 48, 4), (1, 8, 8), (1, 48, 4)))],
    handoffs=[Handoff(50, written=((0, 8), (48, 4)), touched=((8, 44),)),
              Handoff(49, written=((8, 8), (48, 4)), touched=((0, 8), (16, 36)))],
    lost=0)


def sample_v3() -> Profile:
    """Two threads run `work` 50 times each, alternating, thread 0 first, on one `stats`
    (56 bytes, granule 1: 56 <= 256): thread t reads config [16, 48) and lock [48, 52),
    writes count<t> and lock. Thread 0's first end starts W = {count0, lock}; then each
    end of the other thread counts a handoff of W to what that thread touched:
    thread 1 (49 + 1 = 50 times): written count0 + lock = [0, 8) [48, 52), touched
    [8, 52); thread 0 (49 times): written [8, 16) [48, 52), touched [0, 8) [16, 52).
    `buf` (301 bytes of chars: granule 2, as 301 > 256): thread 1 writes `tail`
    (granule [300, 302), clipped to the type: [300, 301)), thread 0 then reads `head`
    (granule [0, 2)), 3 times; one more buf only thread 0 touched. `node`: 8 objects,
    each touched by one thread; 2 did not fit the runtime's table. `ns::msg`: no sharing
    (a type traced before the second thread began)."""
    stats = TypeProfile(
        "stats", 56, list(STATS_FIELDS),
        [AccessSequence(50, (Access(0, 16, 32, "r"), Access(0, 48, 4, "r"),
                             Access(0, 0, 8, "w"), Access(0, 48, 4, "w")), "work"),
         AccessSequence(50, (Access(0, 16, 32, "r"), Access(0, 48, 4, "r"),
                             Access(0, 8, 8, "w"), Access(0, 48, 4, "w")), "work")],
        alignment={0: 100}, sharing=copy.deepcopy(STATS_SHARING))
    buf = TypeProfile(
        "buf", 301, [FieldSpan("head", 0, 1), FieldSpan("data", 1, 299),
                     FieldSpan("tail", 300, 1)],
        [AccessSequence(3, (Access(0, 300, 1, "w"),), "work"),
         AccessSequence(4, (Access(0, 0, 1, "r"),), "work")],
        sharing=TypeSharing(2, 2, 1, [SharedObject(1, ((0, 0, 2),), ((1, 300, 1),))],
                            [Handoff(3, ((300, 1),), ((0, 2),))], 0))
    node = TypeProfile(
        "node", 24, [FieldSpan("key", 0, 8), FieldSpan("next", 8, 8), FieldSpan("val", 16, 8)],
        [AccessSequence(8, (Access(0, 0, 8, "r"), Access(0, 16, 8, "w")), "work")],
        sharing=TypeSharing(1, 2, private_objects=8, lost=2))
    msg = TypeProfile("ns::msg", 8, [FieldSpan("a", 0, 4), FieldSpan("b", 4, 4)],
                      [AccessSequence(2, (Access(0, 4, 4, "r"),), "work")])
    return Profile(types={"stats": stats, "buf": buf, "node": node, "ns::msg": msg},
                   invocations=107, cache_line=64, entry_invocations={"work": 107},
                   metadata={"backend": "compile-time", "instrumentation": "sanitizer-coverage",
                             "commands": [["./counters", "2"]], "entry": ["work"],
                             "date": "2026-01-01T00:00:00+00:00", "processes": 1,
                             "programs": ["/tmp/counters"]})


def _unpacked(text: str) -> tuple[list[str], list[Any]]:
    """The lines of a packed profile without its packed strings, and their MessagePack
    content (a newer zstd may compress differently: the content is compared)."""
    lines, blobs = [], []
    for line in text.splitlines():
        key = line.strip().split(":")[0]
        if key in ('"sequences"', '"shared"', '"handoffs"') and line.strip()[len(key) + 2] == '"':
            blob = json.loads("{" + line.strip().rstrip(",") + "}")[key.strip('"')]
            blobs.append(msgspec.msgpack.decode(unpack_payload(base64.b64decode(blob))))
            line = line[:line.index(key)] + key + ": ..."
        lines.append(line)
    return lines, blobs


def _validator() -> jsonschema.protocols.Validator:
    root = schema(profile.SCHEMA)
    jsonschema.Draft202012Validator.check_schema(root)
    return jsonschema.Draft202012Validator(root)


# ---------------------------------------------------------------- golden files

def test_golden_v3_is_what_save_writes(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    save(sample_v3(), out)
    assert _unpacked(out.read_text()) == _unpacked(GOLDEN_V3.read_text())
    assert dumps(sample_v3(), readable=True) == GOLDEN_V3_READABLE.read_text()


def test_the_packed_sharing_lists_hold_arrays() -> None:
    """Packed, `shared` is [[count, reads, writes], ...] and `handoffs`
    [[count, written, touched], ...], heaviest first (docs/profile-format.md)."""
    lines, blobs = _unpacked(GOLDEN_V3.read_text())
    # types in name order: buf, node, ns::msg, stats; buf's shared and handoffs come
    # before its sequences
    assert blobs[0] == [[1, [[0, 0, 2]], [[1, 300, 1]]]]
    assert blobs[1] == [[3, [[300, 1]], [[0, 2]]]]
    assert blobs[3] == [] and blobs[4] == []          # node: no shared objects, no handoffs
    assert blobs[7] == [[1, [[0, 16, 36], [1, 16, 36]],
                         [[0, 0, 8], [0, 48, 4], [1, 8, 8], [1, 48, 4]]]]
    assert blobs[8] == [[50, [[0, 8], [48, 4]], [[8, 44]]],
                        [49, [[8, 8], [48, 4]], [[0, 8], [16, 36]]]]
    data = json.loads(GOLDEN_V3.read_text())
    assert data["version"] == 3 and "sharing" not in data["types"]["ns::msg"]
    assert {k: v for k, v in data["types"]["node"]["sharing"].items()
            if not isinstance(v, str)} == {"granule": 1, "threads": 2, "private_objects": 8,
                                           "lost": 2}


def test_golden_v3_loads_back_in_both_forms() -> None:
    for path in (GOLDEN_V3, GOLDEN_V3_READABLE):
        prof = load(path)
        assert dumps(prof, readable=True) == GOLDEN_V3_READABLE.read_text()
        assert prof.types["stats"].sharing == STATS_SHARING
        assert prof.types["buf"].sharing == TypeSharing(
            2, 2, 1, [SharedObject(1, ((0, 0, 2),), ((1, 300, 1),))],
            [Handoff(3, ((300, 1),), ((0, 2),))], 0)
        assert prof.types["node"].sharing == TypeSharing(1, 2, 8, [], [], 2)
        assert prof.types["ns::msg"].sharing is None
        assert prof.types["stats"].alignment == {0: 100}


@pytest.mark.parametrize("golden", [GOLDEN_V3, GOLDEN_V3_READABLE], ids=lambda p: p.name)
def test_golden_v3_follows_the_published_schema(golden: Path) -> None:
    _validator().validate(json.loads(golden.read_text()))
    bad = json.loads(GOLDEN_V3_READABLE.read_text())
    bad["types"]["stats"]["sharing"]["handoffs"][0]["written"][0] = [0, 0]
    assert [e.message for e in _validator().iter_errors(bad)]
    with pytest.raises(UserError) as info:
        loads(json.dumps(bad).encode(), "p.json")
    # msgspec's words (they vary a little between its versions), then the place
    assert info.value.what.startswith("p.json: not a valid cachefit profile: Expected `int` >= 1")
    assert info.value.what.endswith(" - at `$.types[...].sharing.handoffs[0].written[0][1]`")


def test_round_trip_keeps_the_sharing(tmp_path: Path) -> None:
    for name in ("p.json", "p.json.gz"):
        out = tmp_path / name
        save(sample_v3(), out)
        assert (out.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
        again = load(out)
        want = sample_v3()
        for t in want.types.values():
            t.sort()
        assert again.types == want.types
        assert dumps(again) == dumps(want)


def test_without_sharing_version_2_is_written_as_before(tmp_path: Path) -> None:
    """No type with sharing: version 2, byte for byte what was written before version 3
    (the golden version 2 files: readable exactly, packed but for the zstd frames)."""
    prof = load(GOLDEN_V2)
    assert prof.version() == 2
    assert dumps(prof, readable=True) == GOLDEN_V2_READABLE.read_text()
    out = tmp_path / "p.json"
    save(prof, out)
    assert _unpacked(out.read_text()) == _unpacked(GOLDEN_V2.read_text())
    # The version 3 sample without its sharing is version 2, with no `sharing` key.
    plain = sample_v3()
    for t in plain.types.values():
        t.sharing = None
    text = dumps(plain, readable=True)
    assert json.loads(text)["version"] == 2 and '"sharing"' not in text
    assert dumps(loads(text.encode()), readable=True) == text
    # One type with sharing is enough for version 3.
    plain.types["node"].sharing = TypeSharing(1, 2, 8)
    assert json.loads(dumps(plain))["version"] == 3


def test_a_version_3_document_without_sharing_loads() -> None:
    data = json.loads(GOLDEN_V2_READABLE.read_text())
    data["version"] = 3
    prof = loads(json.dumps(data).encode(), "p.json")
    assert all(t.sharing is None for t in prof.types.values())
    assert dumps(prof, readable=True) == GOLDEN_V2_READABLE.read_text()


def test_sharing_lists_are_optional_in_a_hand_written_file() -> None:
    data = json.loads(GOLDEN_V3_READABLE.read_text())
    data["types"]["node"]["sharing"] = {"granule": 1, "threads": 2}
    prof = loads(json.dumps(data).encode())
    assert prof.types["node"].sharing == TypeSharing(1, 2, 0, [], [], 0)


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda s: s.update(shared="KLUv/QBYAAA="),
     ("$.types['stats'].sharing.shared: corrupt or truncated zstd data (", ")")),
    (lambda s: s.update(handoffs=s["handoffs"][:20]),
     ("$.types['stats'].sharing.handoffs: corrupt or truncated zstd data (", ")")),
    (lambda s: s.update(handoffs=_packed([[1, [[0, 8]], []], [0, [[0, 8]], [[8, 8]]]])),
     ("$.types['stats'].sharing.handoffs: Expected `int` >= 1", " - at `$[1][0]`")),
    (lambda s: s.update(shared=_packed([[1, [[0, 0, 8]], [[1, 0, 8, 9]]]])),
     ("$.types['stats'].sharing.shared: Expected `array` of length 3", " - at `$[0][2][0]`")),
    (lambda s: s.update(granule=24),
     "$.types['stats'].sharing.granule: 24 is not a power of two"),
    (lambda s: s.update(threads=1),
     "$.types['stats'].sharing.shared[0].reads[1]: thread 1 is not below threads (1)"),
    (lambda s: s.update(handoffs=_packed([[1, [[0, 8]], []]])),
     "$.types['stats'].sharing.handoffs[0].touched: no bytes (a handoff has some)"),
])
def test_bad_packed_sharing_is_one_located_line(tmp_path: Path, mutate, message) -> None:  # type: ignore[no-untyped-def]
    """The place and what is wrong (msgspec's and zstd's words, which vary a little
    between their versions, are checked by their start and end)."""
    data = json.loads(GOLDEN_V3.read_text())
    mutate(data["types"]["stats"]["sharing"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        load(bad)
    head = f"{bad}: not a valid cachefit profile: "
    if isinstance(message, tuple):
        assert info.value.what.startswith(head + message[0]), info.value.what
        assert info.value.what.endswith(message[1]), info.value.what
    else:
        assert info.value.what == head + message


def _packed(items: list[Any]) -> str:
    import zstandard
    return base64.b64encode(zstandard.ZstdCompressor().compress(
        msgspec.msgpack.encode(items))).decode()


# ---------------------------------------------------------------- rules no schema states

def _stats(**changes: Any) -> TypeProfile:
    return TypeProfile("stats", 56, list(STATS_FIELDS),
                       sharing=replace(copy.deepcopy(STATS_SHARING), **changes))


@pytest.mark.parametrize(("sharing", "what"), [
    ({"granule": 3}, "sharing.granule: 3 is not a power of two"),
    ({"threads": 1}, "sharing.shared[0].reads[1]: thread 1 is not below threads (1)"),
    ({"shared": [SharedObject(1, ((0, 16, 36), (1, 16, 41)), ())]},
     "sharing.shared[0].reads[1]: bytes [16, 57) are not inside the 56-byte type"),
    ({"shared": [SharedObject(1, ((0, 0, 8), (0, 8, 8), (1, 0, 4)), ())]},
     "sharing.shared[0].reads[1]: not after the range before it (a thread's ranges "
     "ascending, apart, joined when they touch)"),
    ({"shared": [SharedObject(1, ((1, 0, 8), (0, 16, 8)), ())]},
     "sharing.shared[0].reads[1]: not after the range before it (a thread's ranges "
     "ascending, apart, joined when they touch)"),
    ({"shared": [SharedObject(1, ((0, 0, 8),), ((0, 48, 4),))]},
     "sharing.shared[0]: touched by thread 0 only (a shared object has two threads or "
     "more)"),
    ({"shared": [SharedObject(1, (), ())]},
     "sharing.shared[0]: touched by no thread (a shared object has two threads or more)"),
    ({"handoffs": [Handoff(1, ((0, 8), (8, 8)), ((16, 8),))]},
     "sharing.handoffs[0].written[1]: not after the range before it (ranges ascending, "
     "apart, joined when they touch)"),
    ({"handoffs": [Handoff(1, (), ((16, 8),))]},
     "sharing.handoffs[0].written: no bytes (a handoff has some)"),
    ({"granule": 4, "handoffs": [Handoff(1, ((0, 8),), ((16, 6),))]},
     "sharing.handoffs[0].touched[0]: bytes [16, 22) are not a run of 4-byte granules "
     "(ending at one or at the end of the type)"),
    ({"granule": 4, "handoffs": [Handoff(1, ((2, 4),), ((16, 8),))]},
     "sharing.handoffs[0].written[0]: bytes [2, 6) are not a run of 4-byte granules "
     "(ending at one or at the end of the type)"),
])
def test_the_sharing_rules(sharing: dict[str, Any], what: str) -> None:
    with pytest.raises(UserError) as info:
        check_type_profile(_stats(**sharing))
    assert info.value.what == f"malformed profile entry: {what}"


@pytest.mark.parametrize(("sharing", "what"), [
    ({"handoffs": [Handoff(0, ((0, 8),), ((16, 8),))]},
     ("Expected `int` >= 1", " - at `$.sharing.handoffs[0].count`")),
    ({"shared": [SharedObject(1, ((-1, 0, 8),), ())]},
     ("Expected `int` >= 0", " - at `$.sharing.shared[0].reads[0][0]`")),
    ({"lost": -1}, ("Expected `int` >= 0", " - at `$.sharing.lost`")),
])
def test_the_sharing_schema_in_code(sharing: dict[str, Any], what: tuple[str, str]) -> None:
    """A TypeSharing built in code is checked by the typed decoding too (msgspec's words
    checked by their start, and the place)."""
    with pytest.raises(UserError) as info:
        check_type_profile(_stats(**sharing))
    assert info.value.what.startswith(f"malformed profile entry: {what[0]}"), info.value.what
    assert info.value.what.endswith(what[1]), info.value.what


def test_sharing_that_keeps_the_rules_passes() -> None:
    for t in sample_v3().types.values():
        check_type_profile(t)
    # a range may end at the type's end off a granule boundary (301 bytes, granule 2)
    check_type_profile(TypeProfile("buf", 301, [], sharing=TypeSharing(
        2, 3, 0, [SharedObject(2, ((0, 298, 3), (2, 0, 2)), ((1, 0, 4),))],
        [Handoff(1, ((0, 2), (300, 1)), ((0, 301),))])))
    with pytest.raises(UserError, match="not a run of 2-byte granules"):
        check_type_profile(TypeProfile("buf", 301, [], sharing=TypeSharing(
            2, 2, 0, [], [Handoff(1, ((0, 2),), ((0, 299),))])))
    # size 0 (layout unknown): nothing to clip to, the granules still count
    check_type_profile(TypeProfile("t", 0, [], sharing=TypeSharing(
        2, 2, 0, [], [Handoff(1, ((300, 2),), ((0, 2),))])))
    with pytest.raises(UserError, match=r"bytes \[300, 301\) are not a run of 2-byte"):
        check_type_profile(TypeProfile("t", 0, [], sharing=TypeSharing(
            2, 2, 0, [], [Handoff(1, ((300, 1),), ((0, 2),))])))
    with pytest.raises(UserError, match=r"Expected `object \| null`.* - at `\$\.sharing`"):
        check_type_profile(TypeProfile("buf", 301, [], sharing=[]))  # type: ignore[arg-type]


def test_the_loader_names_the_broken_rule(tmp_path: Path) -> None:
    data = json.loads(GOLDEN_V3_READABLE.read_text())
    data["types"]["stats"]["sharing"]["handoffs"][1]["touched"] = [[0, 8], [8, 48]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        load(bad)
    assert info.value.what == (
        f"{bad}: not a valid cachefit profile: $.types['stats'].sharing.handoffs[1]"
        ".touched[1]: not after the range before it (ranges ascending, apart, joined when "
        "they touch)")


def test_fields_overlapping_a_range() -> None:
    t = sample_v3().types["stats"]
    assert [f.name for f in t.fields_overlapping(((8, 44),))] == ["count1", "config", "lock"]
    assert [f.name for f in t.fields_overlapping(((7, 2), (52, 4)))] == ["count0", "count1"]
    assert t.fields_overlapping(((52, 4),)) == []


# ---------------------------------------------------------------- merge

def test_merge_adds_sharing_up_by_equality() -> None:
    a, b = sample_v3(), sample_v3()
    b.types["stats"].sharing = TypeSharing(1, 3, 4, [
        SharedObject(2, ((0, 16, 36), (1, 16, 36)),
                     ((0, 0, 8), (0, 48, 4), (1, 8, 8), (1, 48, 4))),
        SharedObject(1, ((2, 16, 32),), ((0, 0, 8),))],
        [Handoff(7, ((8, 8), (48, 4)), ((0, 8), (16, 36))),
         Handoff(1, ((0, 8),), ((16, 32),))], 5)
    b.types["buf"].sharing = None               # a run where buf was not shared: adds nothing
    del b.types["node"]
    m = merge([a, b])
    assert m.types["stats"].sharing == TypeSharing(
        1, 3, 4,
        [SharedObject(3, ((0, 16, 36), (1, 16, 36)),
                      ((0, 0, 8), (0, 48, 4), (1, 8, 8), (1, 48, 4))),
         SharedObject(1, ((2, 16, 32),), ((0, 0, 8),))],
        [Handoff(56, ((8, 8), (48, 4)), ((0, 8), (16, 36))),
         Handoff(50, ((0, 8), (48, 4)), ((8, 44),)),
         Handoff(1, ((0, 8),), ((16, 32),))], 5)
    assert m.types["buf"].sharing == sample_v3().types["buf"].sharing
    assert m.types["node"].sharing == TypeSharing(1, 2, 8, [], [], 2)
    assert m.types["ns::msg"].sharing is None
    assert m.version() == 3
    for t in m.types.values():
        check_type_profile(t)
    # inputs are not changed
    assert a.types["stats"].sharing == STATS_SHARING


def test_merge_refuses_different_granules() -> None:
    a, b = sample_v3(), sample_v3()
    b.types["buf"].sharing = TypeSharing(4, 2)
    with pytest.raises(UserError) as info:
        merge([a, b], names=["a.json", "b.json"])
    assert info.value.what == ("b.json: type buf: sharing was tracked in granules of 4 "
                               "bytes, not 2 as in the profiles before it")


def _random_sharing(rng: random.Random) -> TypeSharing:
    def ranges() -> tuple[tuple[int, int], ...]:
        starts = sorted(rng.sample(range(0, 32, 8), rng.randint(1, 2)))
        return tuple((s, 4) for s in starts)
    shared = [SharedObject(rng.randint(1, 3), tuple((t, o, n) for t in (0, 1)
                                                    for o, n in ranges()), ())
              for _ in range(rng.randint(0, 3))]
    handoffs = [Handoff(rng.randint(1, 5), ranges(), ranges())
                for _ in range(rng.randint(0, 4))]
    return TypeSharing(4, rng.randint(2, 5), rng.randint(0, 3), shared, handoffs,
                       rng.randint(0, 2))


def test_merge_with_sharing_is_exact_and_associative() -> None:
    rng = random.Random(30)
    for _ in range(50):
        parts = []
        for _ in range(3):
            t = TypeProfile("obj", 32, [FieldSpan("f", 0, 32)],
                            [AccessSequence(1, (Access(0, 0, 4, "r"),), "op")],
                            sharing=_random_sharing(rng) if rng.random() < 0.8 else None)
            parts.append(Profile({"obj": t}, invocations=1))
        a, b, c = parts
        flat = merge([a, b, c])
        left = merge([merge([a, b]), c])
        right = merge([a, merge([b, c])])
        assert dumps(left, readable=True) == dumps(flat, readable=True) \
            == dumps(right, readable=True)
        got = flat.types["obj"].sharing
        inputs = [p.types["obj"].sharing for p in parts if p.types["obj"].sharing]
        if not inputs:
            assert got is None
            continue
        assert got is not None
        assert got.threads == max(s.threads for s in inputs)
        assert got.private_objects == sum(s.private_objects for s in inputs)
        assert got.lost == sum(s.lost for s in inputs)
        assert sum(h.count for h in got.handoffs) == sum(
            h.count for s in inputs for h in s.handoffs)
        assert sum(o.count for o in got.shared) == sum(o.count for s in inputs
                                                       for o in s.shared)
        assert len({h.pattern() for h in got.handoffs}) == len(got.handoffs)


# ---------------------------------------------------------------- profile show

def test_show_prints_the_sharing_with_field_names() -> None:
    prof = sample_v3()
    assert render_sharing(prof.types["stats"]) == [
        "  sharing: 2 threads, granule 1 byte; objects: 1 shared (1 pattern), 0 private; "
        "0 lost",
        "    shared x1: t0 r config, lock w count0, lock; t1 r config, lock w count1, lock",
        "  handoffs: 99 (2 patterns)",
        "    #1  count 50 (50.5%): written count0, lock (@0 +8, @48 +4) -> touched count1, "
        "config, lock (@8 +44)",
        "    #2  count 49 (49.5%): written count1, lock (@8 +8, @48 +4) -> touched count0, "
        "config, lock (@0 +8, @16 +36)",
    ]
    assert render_sharing(prof.types["buf"]) == [
        "  sharing: 2 threads, granule 2 bytes; objects: 1 shared (1 pattern), 1 private; "
        "0 lost",
        "    shared x1: t0 r head, data; t1 w tail",
        "  handoffs: 3 (1 pattern)",
        "    #1  count 3 (100.0%): written tail (@300 +1) -> touched head, data (@0 +2)",
    ]
    assert render_sharing(prof.types["node"]) == [
        "  sharing: 2 threads, granule 1 byte; objects: 0 shared (0 patterns), 8 private; "
        "2 lost",
        "  handoffs: 0 (0 patterns)",
    ]
    assert render_sharing(prof.types["ns::msg"]) == []
    lines = render(prof, types=["stats"], title="p").splitlines()
    assert lines[3:5] == ["  alignment: base at 0 mod 64 for all 100 objects touched",
                          render_sharing(prof.types["stats"])[0]]


def test_show_lists_the_heaviest_few() -> None:
    t = TypeProfile("obj", 32, [FieldSpan("a", 0, 16), FieldSpan("b", 16, 16)],
                    sharing=TypeSharing(4, 2, 0, [], [
                        Handoff(n, ((0, 4),), ((16, 4 * n),)) for n in range(1, 5)]))
    lines = render_sharing(t)
    assert lines[1] == "  handoffs: 10 (4 patterns)"
    assert [line.split(":")[0] for line in lines[2:]] == [
        "    #1  count 4 (40.0%)", "    #2  count 3 (30.0%)", "    #3  count 2 (20.0%)",
        "    ... 1 more handoffs"]


# ---------------------------------------------------------------- command line

def test_the_command_line_shows_and_merges_version_3(tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cachefit.cli.main", *args],
                              cwd=tmp_path, capture_output=True, text=True, check=False,
                              timeout=120)

    proc = run("profile", "show", str(GOLDEN_V3), "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == GOLDEN_V3_READABLE.read_text()
    proc = run("profile", "show", str(GOLDEN_V3), "--type", "stats")
    assert proc.returncode == 0, proc.stderr
    assert "\n".join(render_sharing(load(GOLDEN_V3).types["stats"])) in proc.stdout
    out = tmp_path / "m.json"
    proc = run("profile", "merge", str(GOLDEN_V3), str(GOLDEN_V3_READABLE), str(GOLDEN_V2),
               "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    merged = load(out)
    assert json.loads(out.read_text())["version"] == 3
    stats = merged.types["stats"].sharing
    assert stats is not None and [h.count for h in stats.handoffs] == [100, 98]
    assert "tcb" in merged.types and merged.types["tcb"].sharing is None


def test_the_documented_example_is_the_golden_one() -> None:
    """docs/profile-format.md's example of a type's sharing (readable, packed, as `profile
    show` prints it) is the golden files' type `stats`."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "profile-format.md").read_text()
    section = doc.split("### A type's sharing (version 3)")[1].split("\n## ")[0]
    blocks = [b.split("\n", 1)[1] for b in section.split("```")[1::2]]
    readable, packed, shown = blocks
    assert json.loads("{" + readable + "}")["sharing"] == \
        json.loads(GOLDEN_V3_READABLE.read_text())["types"]["stats"]["sharing"]
    assert json.loads("{" + packed + "}")["sharing"] == \
        json.loads(GOLDEN_V3.read_text())["types"]["stats"]["sharing"]
    assert shown.splitlines() == render_sharing(load(GOLDEN_V3).types["stats"])


def test_show_marks_the_thread_that_stands_for_later_ones() -> None:
    """Threads 15 and later are recorded as thread 15 (docs/profile-format.md, *Threads*)."""
    def shown(threads: int) -> str:
        t = TypeProfile("obj", 32, [FieldSpan("a", 0, 16), FieldSpan("b", 16, 16)],
                        sharing=TypeSharing(1, threads, 0, [SharedObject(
                            1, ((0, 0, 16),), ((15, 16, 16),))]))
        return render_sharing(t)[1]
    assert shown(16) == "    shared x1: t0 r a; t15 w b"
    assert shown(17) == "    shared x1: t0 r a; t15+ w b"
