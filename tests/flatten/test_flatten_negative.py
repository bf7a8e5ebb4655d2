"""One negative case per precondition: the specific error, with file:line:col of the offending
code, exit status 2, and every file left untouched (bytes and modification times)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _flatten_support import CORPUS, case_spec, copy_case, negative_cases, snapshot

from cachefit.cli.main import main
from cachefit.flatten import PreconditionFailed, flatten_unit


@pytest.mark.parametrize("name", negative_cases())
def test_refused_with_its_own_error(name: str, tmp_path: Path, capsys) -> None:
    spec = case_spec(name)
    work = copy_case(CORPUS / name, tmp_path / name)
    main_file = work / spec["main"]
    before = snapshot(work)
    with pytest.raises(PreconditionFailed) as info:
        flatten_unit(str(main_file), spec["args"], spec["class"])
    err = info.value
    assert err.code == spec["error"]["code"], err.render()
    assert err.location is not None and err.location.file == str(main_file)
    assert err.location.line == spec["error"]["line"], err.render()
    assert err.location.col > 0
    # the command line: exit status 2, one error line naming the place, nothing written
    for mode in (["--in-place"], ["-o", str(work / "out.cc")], ["--diff"], []):
        status = main(["flatten", spec["class"], str(main_file), *mode, "--", *spec["args"]])
        captured = capsys.readouterr()
        assert status == 2
        first = captured.err.splitlines()[0]
        assert first.startswith(f"cachefit: error: {main_file}:{spec['error']['line']}:"), first
        assert f"precondition {err.number}" in first
        assert captured.out == ""
        assert snapshot(work) == before, "a file was touched"
        assert not (work / "out.cc").exists()
    assert not [f for f in os.listdir(work) if f.endswith(".tmp")]


def test_every_precondition_has_a_negative_case() -> None:
    numbers = set()
    codes = set()
    for name in negative_cases():
        codes.add(case_spec(name)["error"]["code"])
    assert len(negative_cases()) >= 8
    assert len(codes) == len(negative_cases()), "two cases test the same error"
    for code, number in {"invalid-cxx": 1, "base-instance": 2, "base-pointer": 2,
                         "base-conversion": 2, "dynamic-cast": 2, "typeid": 2,
                         "duplicate-data-member": 3, "shadowed-member-used": 3,
                         "ambiguous-name": 4}.items():
        assert code in codes, code
        numbers.add(number)
    assert numbers == {1, 2, 3, 4}
