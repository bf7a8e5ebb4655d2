"""The formats model/ owns, against their published JSON Schemas (src/cachefit/model/schemas/):
golden files load and validate, a malformed file gives one located line (exit 2 from the
CLI), and the profile's schema is the one msgspec derives from the types that decode it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from cachefit.errors import UserError
from cachefit.model import layout_plan, profile
from cachefit.model.project_config import load_reorder_config, parse_config
from cachefit.model.project_toml import SCHEMA as TOML_SCHEMA
from cachefit.model.schema_check import schema

TESTS = Path(__file__).resolve().parents[1]
GOLDEN_TOML = Path(__file__).resolve().parent / "golden" / "cachefit.toml"
GOLDEN_PLAN = TESTS / "pipeline" / "golden" / "layout-plan-v1.json"
GOLDEN_PROFILES = [TESTS / "trace" / "golden" / n
                   for n in ("profile_v2.json", "profile_v2_readable.json")]
SCHEMAS = Path(profile.__file__).resolve().parent / "schemas"


def _validator(name: str) -> jsonschema.protocols.Validator:
    root = schema(name)
    jsonschema.Draft202012Validator.check_schema(root)
    return jsonschema.Draft202012Validator(root)


def test_the_published_profile_schema_is_the_one_of_the_decoding_types() -> None:
    published = json.loads((SCHEMAS / profile.SCHEMA).read_text())
    assert published == profile.json_schema(), \
        "regenerate src/cachefit/model/schemas/profile.schema.json from json_schema()"


@pytest.mark.parametrize("golden", GOLDEN_PROFILES, ids=lambda p: p.name)
def test_golden_profiles_validate_and_load(golden: Path) -> None:
    _validator(profile.SCHEMA).validate(json.loads(golden.read_text()))
    loaded = profile.load(golden)
    assert loaded.types and loaded.cache_line == 64
    # The readable form (`cachefit profile show --json`) validates too.
    _validator(profile.SCHEMA).validate(json.loads(profile.dumps(loaded, readable=True)))


def test_a_malformed_profile_is_one_located_line(tmp_path: Path) -> None:
    data = json.loads(GOLDEN_PROFILES[1].read_text())
    name = next(iter(data["types"]))
    data["types"][name]["sequences"][0]["count"] = 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert list(_validator(profile.SCHEMA).iter_errors(data))
    with pytest.raises(UserError) as info:
        profile.load(bad)
    assert str(bad) in info.value.what and "count" in info.value.what
    assert len(info.value.what.splitlines()) == 1


def test_golden_plan_validates_and_loads() -> None:
    _validator(layout_plan.SCHEMA).validate(json.loads(GOLDEN_PLAN.read_text()))
    assert layout_plan.load_plan(GOLDEN_PLAN).records["tcb"].expected_size == 560


def test_a_malformed_plan_is_one_located_line(tmp_path: Path) -> None:
    data = json.loads(GOLDEN_PLAN.read_text())
    data["records"]["tcb"]["expected_size"] = -1
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        layout_plan.load_plan(bad)
    assert info.value.what == \
        f"{bad}: record tcb: `expected_size` must be a positive integer"


def test_golden_project_file_validates_and_loads(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib
    _validator(TOML_SCHEMA).validate(tomllib.loads(GOLDEN_TOML.read_text()))
    config = parse_config(GOLDEN_TOML.read_text(), GOLDEN_TOML)
    assert config.trace.types == ("tcb", "ring<int,16>") and config.build.mode == "profile"
    shutil.copy(GOLDEN_TOML, tmp_path / "cachefit.toml")
    monkeypatch.delenv("CACHEFIT_CONFIG", raising=False)
    reorder = load_reorder_config(str(tmp_path))
    assert reorder.abi == ("wire_header",)
    assert reorder.entry_weights == {"ipc": 3.0, "send": 1.5}


def test_a_malformed_project_file_is_one_located_line(tmp_path: Path) -> None:
    text = GOLDEN_TOML.read_text().replace("max_objects = 64", "max_objects = 0")
    path = tmp_path / "cachefit.toml"
    path.write_text(text)
    import tomllib
    assert list(_validator(TOML_SCHEMA).iter_errors(tomllib.loads(text)))
    with pytest.raises(UserError) as info:
        parse_config(text, path)
    line = text.splitlines().index("max_objects = 0") + 1
    assert str(info.value.location) == f"{path}:{line}:15"
    assert info.value.what == "[trace] max_objects must be an integer from 1 to 32767"


def test_the_settings_name_the_schemas_values() -> None:
    """The modes and backends the code accepts (CACHEFIT_MODE, TraceConfig) are the ones
    the published schema allows in the file."""
    from cachefit.model.project_config import BACKENDS, MODES
    props = schema(TOML_SCHEMA)["properties"]
    assert tuple(props["build"]["properties"]["mode"]["enum"]) == MODES
    assert tuple(props["trace"]["properties"]["backend"]["enum"]) == BACKENDS


@pytest.mark.parametrize(("text", "what"), [
    ("[trace]\nmax_objects = 64.0\n",          # a whole float is not an integer
     "[trace] max_objects must be an integer from 1 to 32767"),
    ('[trace]\ntypes = "  "\n', "[trace] types must be a list of names"),
    ("[layout]\nentry_weights = { a = inf }\n",
     "[layout] entry_weights: the weight of a must be a number >= 0, not inf"),
    ("[layout]\nentry_weights = { a = true }\n",
     "[layout] entry_weights: the weight of a must be a number >= 0, not True"),
])
def test_every_loader_checks_every_value_once(text: str, what: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_toml checks the whole file against the schema: the wrapper's settings and the
    deciding stage's alike refuse a bad value, with the same located line."""
    path = tmp_path / "cachefit.toml"
    path.write_text(text)
    monkeypatch.delenv("CACHEFIT_CONFIG", raising=False)
    with pytest.raises(UserError) as first:
        parse_config(text, path)
    with pytest.raises(UserError) as second:
        load_reorder_config(str(tmp_path))
    assert first.value.what == second.value.what == what
    assert first.value.location == second.value.location
    assert first.value.location is not None and first.value.location.line == 2


def test_a_plan_size_must_be_an_integer(tmp_path: Path) -> None:
    data = json.loads(GOLDEN_PLAN.read_text())
    data["records"]["tcb"]["expected_size"] = 560.0
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(UserError, match="`expected_size` must be a positive integer"):
        layout_plan.load_plan(bad)
