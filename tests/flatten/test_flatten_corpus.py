"""The corpus: every hierarchy, flattened, prints what the original prints with g++ 12 and
clang++-19 at -O2; the flat class has no vtable and the expected size."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from _flatten_support import (
    COMPILERS,
    build,
    case_dir,
    case_spec,
    copy_case,
    expected_flat_size,
    has_vtable,
    positive_cases,
    run,
)

from cachefit.flatten import flatten_unit


def _flatten_case(name: str, tmp_path: Path):
    spec = case_spec(name)
    src = case_dir(name)
    orig = copy_case(src, tmp_path / "orig")
    flat = copy_case(src, tmp_path / "flat")
    main = orig / spec["main"]
    result = flatten_unit(str(main), spec["args"], spec["class"])
    assert result.changed_files, "nothing was flattened"
    for f, data in result.contents.items():
        rel = os.path.relpath(f, orig)
        assert not rel.startswith(".."), f"{f} is outside the case"
        (flat / rel).write_bytes(data)
    return spec, orig, flat, result


def _filter(spec: dict, out: str) -> str:
    pattern = spec.get("compare")
    if not pattern:
        return out
    return "\n".join(ln for ln in out.splitlines() if re.match(pattern, ln))


@pytest.mark.parametrize("name", positive_cases())
def test_flattened_program_prints_the_same(name: str, tmp_path: Path) -> None:
    spec, orig, flat, result = _flatten_case(name, tmp_path)
    cls = spec["class"]
    expected = _filter(spec, run(build("g++", orig / spec["main"], spec["args"],
                                       tmp_path / "orig.exe"), spec["run_args"]))
    assert expected.strip(), "the original prints nothing"
    for cxx in COMPILERS:
        exe = build(cxx, flat / spec["main"], spec["args"], tmp_path / f"flat-{cxx}.exe")
        assert _filter(spec, run(exe, spec["run_args"])) == expected, cxx
        assert not has_vtable(exe, cls), f"{cxx}: vtable for {cls} remains"
        for removed in result.report["classes_removed"]:
            assert not has_vtable(exe, removed), f"{cxx}: vtable for {removed} remains"
    # sizeof: the original minus its vtable pointers and the padding between subobjects
    before, vptrs, want = expected_flat_size(str(orig / spec["main"]), spec["args"], cls)
    assert result.report["sizeof_before"] == before
    assert result.report["sizeof_after"] == want, result.report
    assert result.report["sizeof_after"] <= before
    assert result.report["vtable_pointers_removed"] == vptrs


def test_corpus_is_big_enough() -> None:
    assert len(positive_cases()) >= 15
    assert "ipc_tcb" in positive_cases()   # the bundled examples/ipc mixin tcb
