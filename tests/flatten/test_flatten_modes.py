"""The ways to run flattening: a preprocessed unit (the build-time mode), the command line's
outputs (stdout, -o, --in-place, --diff for `git apply`, --json) and a source tree through
compile_commands.json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _flatten_support import CORPUS, HERE, build, case_spec, copy_case, has_vtable, run, snapshot

from cachefit.cli.main import main
from cachefit.flatten import PreconditionFailed, flatten_unit

ARGS = ["-std=c++17"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.mark.parametrize("cxx", ["g++", "clang++-19"])
def test_preprocessed_unit(cxx: str, tmp_path: Path) -> None:
    """`flatten_unit` on a .ii file: what a build step runs between the preprocessor and the
    compiler proper (the same compiler preprocesses and compiles)."""
    work = copy_case(CORPUS / "mixin_tcb", tmp_path / "w")
    ii = work / "main.ii"
    subprocess.run([cxx, *ARGS, "-E", str(work / "main.cc"), "-o", str(ii)], check=True)
    expected = run(build(cxx, work / "main.cc", ARGS, tmp_path / "orig"), [])
    result = flatten_unit(str(ii), ARGS, "tcb")
    assert result.changed_files == [str(ii)]
    assert result.report["sizeof_after"] < result.report["sizeof_before"]
    ii.write_text(result.text())
    exe = build(cxx, ii, ARGS, tmp_path / "flat")
    assert run(exe, []) == expected
    assert not has_vtable(exe, "tcb")


def test_preprocessed_errors_point_at_the_original_source(tmp_path: Path) -> None:
    work = copy_case(CORPUS / "n_base_instance", tmp_path / "w")
    ii = work / "main.ii"
    subprocess.run(["g++", *ARGS, "-E", str(work / "main.cc"), "-o", str(ii)], check=True)
    with pytest.raises(PreconditionFailed) as info:
        flatten_unit(str(ii), ARGS, "derived")
    assert info.value.location.file.endswith("main.cc")
    assert info.value.location.line == case_spec("n_base_instance")["error"]["line"]


def test_default_prints_the_transformed_main_file(tmp_path: Path, capsys) -> None:
    work = copy_case(CORPUS / "single", tmp_path / "w")
    before = snapshot(work)
    assert main(["flatten", "square", str(work / "main.cc"), "--", *ARGS]) == 0
    out = capsys.readouterr().out
    assert out == flatten_unit(str(work / "main.cc"), ARGS, "square").text()
    assert "struct square {" in out and "virtual ~shape" not in out
    assert snapshot(work) == before


def test_output_file_and_in_place(tmp_path: Path, capsys) -> None:
    work = copy_case(CORPUS / "single", tmp_path / "w")
    src = work / "main.cc"
    original = src.read_bytes()
    out = tmp_path / "flat.cc"
    assert main(["flatten", "square", str(src), "-o", str(out), "--", *ARGS]) == 0
    assert src.read_bytes() == original
    flat = out.read_text()
    assert "area() const override" not in flat and "double area() const {" in flat
    assert main(["flatten", "square", str(src), "--in-place", "--", *ARGS]) == 0
    assert src.read_text() == flat
    assert not [f for f in os.listdir(work) if f.endswith(".tmp")]
    capsys.readouterr()


def test_output_file_refused_when_several_files_change(tmp_path: Path, capsys) -> None:
    work = copy_case(CORPUS / "out_of_line", tmp_path / "w")
    before = snapshot(work)
    status = main(["flatten", "car", str(work / "main.cc"), "-o", str(tmp_path / "x.cc"),
                   "--", *ARGS])
    assert status == 2
    assert "use --in-place or --diff" in capsys.readouterr().err
    assert snapshot(work) == before and not (tmp_path / "x.cc").exists()


def test_diff_applies_with_git(tmp_path: Path, capsys, monkeypatch) -> None:
    work = copy_case(CORPUS / "out_of_line", tmp_path / "repo")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "original")
    monkeypatch.chdir(work)
    assert main(["flatten", "car", "main.cc", "--diff", "--", *ARGS]) == 0
    patch = capsys.readouterr().out
    assert "--- a/parts.h" in patch and "+++ b/main.cc" in patch
    expected = flatten_unit(str(work / "main.cc"), ARGS, "car")
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "--check", str(tmp_path / "p.diff")], cwd=work, check=True)
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=work, check=True)
    for f, data in expected.contents.items():
        assert Path(f).read_bytes() == data


def test_json_report(tmp_path: Path, capsys) -> None:
    work = copy_case(CORPUS / "mixin_tcb", tmp_path / "w")
    assert main(["flatten", "tcb", str(work / "main.cc"), "--json", "--", *ARGS]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["class"] == "tcb"
    assert sorted(report["classes_removed"]) == ["api_tcb", "arch_tcb", "base_tcb",
                                                 "tcb_iface"]
    copied = {(m["from"], m["name"]) for m in report["members_copied"]}
    assert ("base_tcb", "myself") in copied and ("arch_tcb", "switch_to") in copied
    assert ("arch_tcb", "init") not in copied          # overridden by tcb::init
    assert {"from": "arch_tcb::init", "as": "arch_tcb_init"} in report["renamed_copies"]
    assert "tcb::init" in report["virtual_functions_devirtualised"]
    assert report["vtable_pointers_removed"] == 3
    assert report["sizeof_before"] > report["sizeof_after"] > 0
    assert report["files"] == ["main.cc"] or report["files"][0].endswith("main.cc")


def test_source_tree_through_compile_commands(tmp_path: Path, capsys, monkeypatch) -> None:
    """Headers and sources rewritten; arch.cc, which defines base members without seeing
    tcb, gets an #include of tcb.h."""
    work = tmp_path / "tree"
    shutil.copytree(HERE / "tree", work)
    sources = ["arch.cc", "tcb.cc", "main.cc"]
    db = [{"directory": str(work), "file": f,
           "arguments": ["g++", *ARGS, "-O2", "-c", f, "-o", f + ".o"]} for f in sources]
    (work / "compile_commands.json").write_text(json.dumps(db))

    def build_tree(name: str) -> str:
        exe = tmp_path / name
        subprocess.run(["g++", *ARGS, "-O2", "-w", *sources, "-o", str(exe)], cwd=work,
                       check=True)
        return run(exe, [])

    expected = build_tree("orig")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "original")
    monkeypatch.chdir(work)
    assert main(["flatten", "tcb", "-p", ".", "--diff"]) == 0
    patch = capsys.readouterr().out
    assert '+#include "tcb.h"' in patch
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=work, check=True)
    assert build_tree("flat") == expected
    assert "class arch_tcb" not in (work / "arch.h").read_text()
    assert "virtual" not in (work / "tcb.h").read_text()


def test_in_place_on_a_tree_is_atomic_and_complete(tmp_path: Path, capsys) -> None:
    work = tmp_path / "tree"
    shutil.copytree(HERE / "tree", work)
    db = [{"directory": str(work), "file": f, "command": f"g++ -std=c++17 -c {f}"}
          for f in ("arch.cc", "tcb.cc", "main.cc")]
    (work / "compile_commands.json").write_text(json.dumps(db))
    assert main(["flatten", "tcb", "-p", str(work), "--in-place", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["files"]) == {"arch.cc", "arch.h", "base.h", "iface.h", "tcb.cc",
                                    "tcb.h"} or len(report["files"]) == 6
    assert not list(work.glob(".*.tmp"))
