"""The profile is checked once, in model/: a loaded file by its version's schema (version
1: schemas/profile-v1.schema.json, version 2: the typed decoding), a TypeProfile built in
code by `check_type_profile`; the layout stage trusts the typed objects. These checks were
the layout stage's ("malformed profile" from its footprints) before issue 28.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    TypeProfile,
    check_type_profile,
    load,
    type_from_json,
)

GOLDEN_V1 = Path(__file__).resolve().parents[1] / "trace" / "golden" / "profile_v1.json"
SIZES = [("head", 4), ("mode", 4), ("tree", 128), ("pos", 8), ("win", 40), ("cnt", 32),
         ("last", 8), ("flags", 1), ("hash", 32), ("tail", 4)]
OFFSETS = [0, 4, 8, 136, 144, 184, 216, 224, 232, 264]
FIELDS = [FieldSpan(n, o, s) for (n, s), o in zip(SIZES, OFFSETS, strict=True)]
"""The stored layout of tests/layout/test_layout_shared_footprints.py's record (272 bytes)."""


def _bad_type(count: int = 1, access: Access | None = None,
              fields: list[FieldSpan] | None = None) -> TypeProfile:
    return TypeProfile("s", 4, fields or [], [AccessSequence(
        count, (access or Access(0, 0, 4, "r"),))])


@pytest.mark.parametrize("bad", [
    _bad_type(access=Access(0, 0, 4, "x")),     # type: ignore[arg-type]
    _bad_type(count=-1),
    _bad_type(access=Access(0, -4, 4, "r")),
    _bad_type(access=Access(0, 0, 0, "r")),
    _bad_type(fields=[FieldSpan("a", -1, 4)]),
    {"fields": [], "sequences": []},            # a dict is not a type entry
    [],
])
def test_malformed_entries_are_user_errors(bad: object) -> None:
    with pytest.raises(UserError, match="malformed profile"):
        check_type_profile(bad)


def test_the_first_bad_access_is_named_in_profile_order() -> None:
    good = Access(0, 0, 1, "r")
    tp = TypeProfile("s", 272, FIELDS, [
        AccessSequence(2, (good, good)),
        AccessSequence(1, (good, Access(0, 4, 0, "r"), Access(0, 8, 2, "x"))),  # type: ignore[arg-type]
        AccessSequence(1, (Access(0, 9, 2, "x"),))])  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"sequences\[1\]\.accesses\[1\] size"):
        check_type_profile(tp)


def test_the_rules_no_schema_states() -> None:
    """A summary has one hit per access; alignment offsets lie within the cache line."""
    tp = TypeProfile("s", 4, [], [AccessSequence(1, (Access(0, 0, 4, "r"),), "op", (1, 2))])
    with pytest.raises(UserError, match="one hit count per access"):
        check_type_profile(tp)
    tp = TypeProfile("s", 4, [], [], alignment={64: 1}, alignment_line=64)
    with pytest.raises(UserError, match=r"'64' is not an offset in \[0, 64\)"):
        check_type_profile(tp)
    check_type_profile(TypeProfile("s", 4, [FieldSpan("a", 0, 4)], [AccessSequence(
        2, (Access(0, 0, 4, "r"), Access(0, 0, 4, "w")), "op", (3, 1))],
        alignment={0: 2}, alignment_line=64))


def test_a_zero_byte_access_is_not_in_the_format(tmp_path: Path) -> None:
    """No tracer writes one (docs/profile-format.md): a file with one is refused when it is
    read, in either version, not later by the layout stage."""
    data = json.loads(GOLDEN_V1.read_text())
    data["types"]["tcb"]["sequences"][1]["accesses"][0][2] = 0
    bad = tmp_path / "v1.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        load(bad)
    assert info.value.what == (
        f'{bad}: not a valid cachefit profile: types["tcb"].sequences[1].accesses[0] size '
        "must be an integer >= 1, not 0 (an access touches at least one byte)")
    from cachefit.model.profile import dumps, loads
    good = load(GOLDEN_V1)
    text = dumps(good, readable=True).replace('"accesses": [[0,0,8,"r"]]',
                                              '"accesses": [[0,0,0,"r"]]')
    assert '[0,0,0,"r"]' in text
    with pytest.raises(UserError, match=r"Expected `int` >= 1"):
        loads(text.encode(), "v2.json")


@pytest.mark.parametrize(("entry", "what"), [
    ([], 'types["t"] is not an object'),
    ({"sequences": []}, 'types["t"].size must be an integer >= 0'),
    ({"size": 4, "fields": [{"offset": 0, "size": 4}], "sequences": []},
     'types["t"].fields[0] needs a name'),
    ({"size": 4, "fields": [{"name": "a", "offset": -1, "size": 4}], "sequences": []},
     'types["t"].fields[0] must be an integer >= 0'),
    ({"size": 4, "sequences": {}}, 'types["t"].sequences is not a list'),
    ({"size": 4, "sequences": [{"count": 1}]},
     'types["t"].sequences[0] needs count and accesses'),
    ({"size": 4, "sequences": [{"count": 0, "accesses": []}]},
     'types["t"].sequences[0].count must be an integer >= 1'),
    ({"size": 4, "sequences": [{"count": 1, "accesses": [[0, 0, 4, "r"], [0, 0, 4]]}]},
     'types["t"].sequences[0].accesses[1] is not [role, offset, size, r|w]'),
    ({"size": 4, "sequences": [], "dropped": {"runaway": -1}},
     'types["t"].dropped.runaway must be an integer >= 0'),
])
def test_version_1_entries_are_checked_by_their_schema(entry: object, what: str) -> None:
    """The messages of the hand-written version 1 checks, now the schema's."""
    with pytest.raises(UserError) as info:
        type_from_json("t", entry, "p.json")
    assert info.value.what == f"p.json: not a valid cachefit profile: {what}"


def test_the_golden_version_1_profile_follows_its_schema() -> None:
    from cachefit.model.profile import SCHEMA_V1
    from cachefit.model.schema_check import first_error
    assert first_error(SCHEMA_V1, json.loads(GOLDEN_V1.read_text())) is None
    assert load(GOLDEN_V1).types["tcb"].sequences[0].count == 6
