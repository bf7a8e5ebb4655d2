"""`show --json` objects validate against docs/show-json.schema.json (draft 2020-12)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from corpus_support import CXX_ARGS, CXX_FILE, Build

from cachefit.cli.main import main
from cachefit.frontend.dwarf_records import list_records
from cachefit.model import Record

SCHEMA_FILE = Path(__file__).parents[2] / "docs" / "show-json.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_corpus_record_validates(validator: jsonschema.Draft202012Validator,
                                       libclang_models: dict[str, dict[str, Record]],
                                       builds: dict[tuple[str, str], Build]) -> None:
    objects: list[dict[str, Any]] = []
    for models in libclang_models.values():
        objects += [r.to_json() for r in models.values()]
    for build in builds.values():
        objects += [r.to_json(128) for r in list_records(str(build.exe))]
    assert len(objects) > 100
    for obj in objects:
        errors = [e.message for e in validator.iter_errors(obj)]
        assert not errors, f"{obj['name']}: {errors}"


@pytest.mark.parametrize("name", ["ns::vb_diamond", "ns::pixel", "kern::tcb"])
def test_cli_output_validates(name: str, validator: jsonschema.Draft202012Validator,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", name, str(CXX_FILE), "--json", "--", *CXX_ARGS]) == 0
    validator.validate(json.loads(capsys.readouterr().out))


def test_schema_rejects_what_it_should(validator: jsonschema.Draft202012Validator,
                                       libclang_models: dict[str, dict[str, Record]]) -> None:
    good = libclang_models["cxx"]["kern::tcb"].to_json()
    validator.validate(good)
    broken = []
    for mutate in (
        lambda o: o.pop("vptr_offset"),
        lambda o: o.update(kind="enum"),
        lambda o: o.update(extra=1),
        lambda o: o["fields"][2].update(bit_offset=None),  # a bit-field without position
        lambda o: o["fields"][0].update(bit_offset=3),  # a position without width
        lambda o: o["fields"][0].update(access="friend"),
        lambda o: o["bases"].append({"name": "b", "offset": 0, "size": 1}),
    ):
        obj = copy.deepcopy(good)
        mutate(obj)
        broken.append(validator.is_valid(obj))
    assert broken == [False] * len(broken)
