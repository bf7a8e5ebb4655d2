"""The layout plan file (docs/layout-plan.md): golden round trip, validation, discovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.model.layout_plan import (
    LayoutPlan,
    RecordPlan,
    find_plan,
    load_plan,
    parse_plan,
    save_plan,
)
from cachefit.model.project_config import parse_config

GOLDEN = Path(__file__).resolve().parent / "golden" / "layout-plan-v1.json"


def test_golden_round_trip(tmp_path: Path) -> None:
    plan = load_plan(GOLDEN)
    assert plan.flatten == ("tcb",)
    assert plan.records["tcb"] == RecordPlan(("state", "partner", "space"), 560)
    assert plan.records["ns::queue"] == RecordPlan(("head", "tail"), None)
    assert plan.fix_initializers is False
    out = tmp_path / "sub" / "plan.json"
    save_plan(plan, out)
    assert out.read_text() == GOLDEN.read_text()
    assert [p.name for p in out.parent.iterdir()] == ["plan.json"]   # no temp file left


def test_minimal_plan_and_defaults() -> None:
    plan = parse_plan({"format": "cachefit-layout-plan", "version": 1,
                       "records": {"item": {"order": ["b", "a"]}}})
    assert plan.flatten == () and not plan.fix_initializers
    assert plan.type_names == ("item",)
    assert plan.entries_for(["item", "other"]) == {
        "flatten": [], "records": {"item": {"order": ["b", "a"], "expected_size": None}},
        "fix_initializers": False}
    assert plan.entries_for([])["records"] == {}


@pytest.mark.parametrize("data, message", [
    ([], "JSON object"),
    ({"format": "other", "version": 1}, "not a layout plan"),
    ({"format": "cachefit-layout-plan", "version": 2}, "version 2"),
    ({"format": "cachefit-layout-plan", "version": 1, "flaten": []}, "unknown key"),
    ({"format": "cachefit-layout-plan", "version": 1, "flatten": "tcb"}, "list of names"),
    ({"format": "cachefit-layout-plan", "version": 1, "records": {"t": {}}}, "no `order`"),
    ({"format": "cachefit-layout-plan", "version": 1,
      "records": {"t": {"order": ["a", "a"]}}}, "twice"),
    ({"format": "cachefit-layout-plan", "version": 1,
      "records": {"t": {"order": ["a"], "expected_size": "8"}}}, "positive integer"),
    ({"format": "cachefit-layout-plan", "version": 1, "fix_initializers": 1}, "true or false"),
])
def test_invalid_plans(data: object, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_plan(data, "p.json")


def test_bad_json_names_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "plan.json"
    p.write_text('{"format": "cachefit-layout-plan",\n "version": 1,,}\n')
    with pytest.raises(UserError) as info:
        load_plan(p)
    assert f"{p}:2:" in info.value.what


def test_discovery_env_then_project_file(tmp_path: Path) -> None:
    save_plan(LayoutPlan(records={"a": RecordPlan(("x",))}), tmp_path / "conf" / "p.json")
    save_plan(LayoutPlan(flatten=("b",)), tmp_path / "env.json")
    toml = tmp_path / "conf" / "cachefit.toml"
    toml.write_text('[build]\nlayouts = "p.json"\n')
    config = parse_config(toml.read_text(), toml)
    assert config.build.layouts == "p.json"
    from_toml = find_plan(config.path, config.build.layouts, {})
    assert from_toml is not None and list(from_toml.records) == ["a"]
    from_env = find_plan(config.path, config.build.layouts,
                         {"CACHEFIT_LAYOUTS": str(tmp_path / "env.json")})
    assert from_env is not None and from_env.flatten == ("b",)
    assert find_plan(None, None, {}) is None
    with pytest.raises(UserError, match="cannot read layout plan"):
        find_plan(None, None, {"CACHEFIT_LAYOUTS": str(tmp_path / "missing.json")})
    with pytest.raises(UserError, match="layouts must be"):
        parse_config("[build]\nlayouts = 3\n", toml)
    assert json.loads((tmp_path / "env.json").read_text())["flatten"] == ["b"]


def test_profile_builds_take_the_plan_when_it_exists(tmp_path: Path) -> None:
    from cachefit.pipeline.compiler_wrapper import ProfileBuild
    toml = tmp_path / "cachefit.toml"
    toml.write_text('[build]\nlayouts = "plan.json"\n[trace]\ntypes = ["tcb"]\n'
                    'entry = ["ipc"]\n')
    config = parse_config(toml.read_text(), toml)
    assert ProfileBuild(config, ["cc"], "c", {}).plan is None     # not written yet
    save_plan(LayoutPlan(flatten=("tcb",)), tmp_path / "plan.json")
    plan = ProfileBuild(config, ["cc"], "c", {}).plan
    assert plan is not None and plan.flatten == ("tcb",)
    with pytest.raises(UserError, match="cannot read layout plan"):
        ProfileBuild(config, ["cc"], "c", {"CACHEFIT_LAYOUTS": str(tmp_path / "no.json")})
