"""The layout plan's `padding` (issue 30): parsed, validated, saved, and absent from what
a plan without padding writes (docs/layout-plan.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.model.layout_plan import LayoutPlan, RecordPlan, load_plan, save_plan

GOLDEN_PLAN = Path(__file__).resolve().parents[1] / "pipeline" / "golden" / "layout-plan-v1.json"


def _plan(record: dict) -> dict:  # type: ignore[type-arg]
    return {"format": "cachefit-layout-plan", "version": 1, "records": {"stats": record}}


def _load(tmp_path: Path, data: dict) -> LayoutPlan:  # type: ignore[type-arg]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data))
    return load_plan(path)


def test_padding_round_trips(tmp_path: Path) -> None:
    plan = _load(tmp_path, _plan({"order": ["lock", "c0", "cfg", "c1"], "expected_size": 136,
                                  "padding": {"cfg": 48, "c1": 32}}))
    rec = plan.records["stats"]
    assert rec.padding == {"cfg": 48, "c1": 32} and rec.expected_size == 136
    out = tmp_path / "saved.json"
    save_plan(plan, out)
    saved = json.loads(out.read_text())
    assert saved["records"]["stats"] == {"order": ["lock", "c0", "cfg", "c1"],
                                         "expected_size": 136,
                                         "padding": {"cfg": 48, "c1": 32}}
    assert load_plan(out).records["stats"].padding == {"cfg": 48, "c1": 32}
    assert plan.entries_for(["stats"])["records"]["stats"]["padding"] == {"cfg": 48, "c1": 32}


def test_no_padding_writes_what_it_wrote_before(tmp_path: Path) -> None:
    """The golden plan has no padding: saved byte for byte as before, no `padding` key in
    the cache's entries."""
    plan = load_plan(GOLDEN_PLAN)
    assert all(r.padding == {} for r in plan.records.values())
    out = tmp_path / "plan.json"
    save_plan(plan, out)
    assert out.read_text() == GOLDEN_PLAN.read_text()
    assert "padding" not in plan.entries_for(["tcb"])["records"]["tcb"]
    empty = _load(tmp_path, _plan({"order": ["a"], "padding": {}}))
    assert empty.records["stats"] == RecordPlan(("a",))


BYTES = '`records["stats"].padding["c1"]` must be a positive integer (bytes of padding ' \
    'before c1)'


@pytest.mark.parametrize(("padding", "what"), [
    ({"c1": 0}, BYTES),
    ({"c1": 2.5}, BYTES),
    ({"c1": "8"}, BYTES),
    ([8], "record stats: `padding` must be an object of field name -> bytes"),
    ({"zz": 8}, "record stats: padding before zz, which `order` does not name"),
])
def test_bad_padding_is_one_line(tmp_path: Path, padding: object, what: str) -> None:
    with pytest.raises(UserError) as info:
        _load(tmp_path, _plan({"order": ["c0", "c1"], "padding": padding}))
    assert info.value.what == f"{tmp_path / 'plan.json'}: {what}"
