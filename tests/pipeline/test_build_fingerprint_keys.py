"""`cachefit build` with a record key by layout fingerprint, `rec@50fc03a7` (issue 27).

tests/trace/programs/samedef_*: one header defines `struct rec` with a member inside
`#ifdef REC_BIG`; samedef_lib.c defines REC_BIG (80 bytes: a@0, pad@8, b@72),
samedef_main.c does not (16 bytes: a@0, b@8). Both definitions are at samedef_rec.h:7, so
the profile keys the first the link step meets by that place and the other by its
fingerprint. The layout step tells them apart by their layout: each key is planned from
its own units and record, the optimize build applies each plan to its own layout only,
the DWARF checks find each planned record, and the retrace measures each. A fingerprint
key whose layout no kept unit defines is refused with a one-line reason, and the place
key with it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.cli.main import main
from cachefit.frontend.dwarf_records import open_dwarf
from cachefit.model.record_fingerprint import fingerprint, fingerprint_of
from cachefit.pipeline.definition_keys import key_test
from compiled_helpers import build_in, makefile, run_build, write_project

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
FILES = ("samedef_rec.h", "samedef_main.c", "samedef_lib.c")
PLACE = "rec@samedef_rec.h:7"
# the fingerprint of the big layout, from its size and named members with their offsets
FP = "rec@" + fingerprint(80, [("a", 0), ("pad", 8), ("b", 72)])
MAKEFILE = makefile("CC", {"main.o": ["samedef_main.c", "samedef_rec.h"],
                           "lib.o": ["samedef_lib.c", "samedef_rec.h"]})
COMPILERS = [pytest.param(c, marks=pytest.mark.skipif(
    shutil.which(c) is None or shutil.which("clang-19") is None, reason=f"no {c}"))
    for c in ("clang-19", "gcc")]


def _project(tmp: Path, compiler_key: str, compiler: str) -> Path:
    return write_project(tmp, PROGRAMS, FILES, MAKEFILE, types=["rec"],
                         entry=["op_main", "op_lib"], compiler_key=compiler_key,
                         compiler=compiler)


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_build_plans_a_fingerprint_key(tmp_path: Path, compiler: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """By hand: op_lib reads b (72..80) and writes a (0..8) of the big rec, three times:
    two lines wherever it starts, one with b beside a. op_main touches the small rec's
    16 bytes, twice: one line, kept. Before, the place key was analysed in the first unit
    with a definition at that place, the big one: its plan had `pad` and the DWARF check
    of the optimized binary failed. `cachefit report --binary` of the profile build finds
    the fingerprint key's record by its fingerprint (it said `not analysed` before)."""
    built = build_in(_project(tmp_path, "cc", compiler), tmp_path)
    out, profile, plan, summary = built.out, built.profile, built.plan, built.summary
    assert sorted(profile.types) == [FP, PLACE]
    assert (profile.types[FP].size, profile.types[PLACE].size) == (80, 16)
    assert plan == {FP: {"order": ["a", "b", "pad"], "expected_size": 80},
                    PLACE: {"order": ["a", "b"], "expected_size": 16}}
    assert sorted((t["name"], t["lines_before"], t["lines_after"], t["size_after_source"])
                  for t in summary["types"]) == [(FP, 2.0, 1.0, "DWARF"),
                                                 (PLACE, 1.0, 1.0, "DWARF")]
    # the retrace: each plan built and traced (the big layout has a new fingerprint
    # there), checked against its DWARF record and measured at one line
    retrace = json.loads((out / "steps" / "retrace.json").read_text())["types"]
    assert {k: (v["lines"], v["size"], v["layout_checked"]) for k, v in retrace.items()} == \
        {FP: (1.0, 80, "DWARF"), PLACE: (1.0, 16, "DWARF")}
    log = (out / "optimize" / "build.log").read_text()
    assert "compiled as declared" not in log
    optimized = out / "optimize" / "bin" / "prog"
    with open_dwarf(str(optimized)) as reader:
        built = sorted([f.name for f in rec.fields] for _die, rec in reader.definitions("rec"))
    assert built == [["a", "b"], ["a", "b", "pad"]]
    # each unit prints its rec's sizeof and offsets: the small one as declared, the big
    # one with b at 8 and pad after it; the results as the program computes them
    run = subprocess.run([str(optimized)], capture_output=True, text=True, check=True)
    assert run.stdout == "results 2 6\nmain 16 0 8\nlib 80 0 16 8\n"
    capsys.readouterr()
    assert main(["report", str(out / "profile.json"), "--type", FP, "--layouts",
                 str(out / "layout-plan.json"), "--binary",
                 str(out / "profile" / "bin" / "prog")]) == 0
    text = capsys.readouterr().out
    assert "not analysed" not in text
    assert f"type {FP}: 80 bytes, 1 sequence, 3 counted invocations\n" in text
    assert "  lines per invocation          2.00      1.00         1.00\n" in text
    assert "  size (bytes)                    80        80\n" in text


@pytest.mark.skipif(shutil.which("clang++-19") is None or shutil.which("make") is None,
                    reason="needs clang++-19 and make")
def test_build_plans_a_fingerprint_key_of_a_cxx_class(tmp_path: Path) -> None:
    """The same program as C++, `rec` a class: the same keys, plans and offsets."""
    project = _project(tmp_path, "cxx", "clang++-19")
    header = project / "samedef_rec.h"
    header.write_text(header.read_text().replace("struct rec {\n", "class rec {\npublic:\n"))
    for unit in ("samedef_main", "samedef_lib"):
        c = project / f"{unit}.c"
        (project / f"{unit}.cc").write_text(
            c.read_text().replace("= malloc(sizeof *r)", "= (struct rec *)malloc(sizeof *r)"))
        c.unlink()
    (project / "Makefile").write_text(MAKEFILE.replace("$(CC)", "$(CXX)").replace(".c ", ".cc ")
                                      .replace(".c\n", ".cc\n"))
    built = build_in(project, tmp_path)
    assert built.plan == {FP: {"order": ["a", "b", "pad"], "expected_size": 80},
                          PLACE: {"order": ["a", "b"], "expected_size": 16}}
    run = subprocess.run([str(built.out / "optimize" / "bin" / "prog")], capture_output=True,
                         text=True, check=True)
    assert run.stdout == "results 2 6\nmain 16 0 8\nlib 80 0 16 8\n"


@pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("make") is None,
                    reason="needs clang-19 and make")
def test_unfound_fingerprint_key_is_refused_with_the_place_key(tmp_path: Path) -> None:
    """The big layout's unit is not among the kept units (as for a unit built outside the
    wrapper): its key is refused, saying what to do, and the place key with it, since the
    optimize build could not tell the two apart without both plans."""
    project = _project(tmp_path, "cc", "clang-19")
    proc = run_build(project, tmp_path, "profile", "trace")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    units = project / "out" / "units" / "profile"
    gone = [p for p in units.iterdir() if p.name.startswith("samedef_lib-")]
    assert len(gone) == 2           # the preprocessed unit and its sidecar
    for p in gone:
        p.unlink()
    proc = run_build(project, tmp_path, "layout")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = [line for line in proc.stderr.splitlines() if line.startswith("cachefit: error:")]
    assert error == [
        f"cachefit: error: {FP}: no unit of the profile build defines this layout of rec "
        "(80 bytes: a@0, pad@8, b@72); build the units that define it through cachefit's "
        "wrapper, or name another definition in [trace] types"]
    assert (f"  {PLACE} was refused too: {PLACE}: not reordered: {FP}, another layout of "
            "rec that the place does not tell from it, is refused") in proc.stderr
    layouts = {p.name: json.loads(p.read_text()) for p in (project / "out" / "layout").iterdir()}
    assert sorted(layouts) == [f"rec_{FP[4:]}.json", "rec_samedef_rec.h_7.json"]
    assert all("refused" in v for v in layouts.values())


def test_key_tests() -> None:
    """Which definitions a key names: by place, by fingerprint, and by place but not the
    layouts other keys of the name take by fingerprint (the fingerprint asked only then)."""
    keys = [PLACE, "rec@50fc03a7", "dict@src/dict.h:79", "dict@deps/dict.h:55", "obj"]
    asked: list[int] = []

    def fp(value: str):  # noqa: ANN202 - a counting fingerprint
        return lambda: asked.append(1) or value

    assert key_test("obj", keys) is None
    (plain := key_test("dict@src/dict.h:79", keys))
    assert plain is not None and not plain.by_layout
    assert plain.matches("src/dict.h", 79, fp("x"), "/p")
    assert not plain.matches("deps/dict.h", 55, fp("x"), "/p")
    assert asked == []
    place = key_test(PLACE, keys)
    assert place is not None and place.by_layout and place.others == {"50fc03a7"}
    assert place.matches("samedef_rec.h", 7, fp("11111111"), "/p")
    assert not place.matches("samedef_rec.h", 7, fp("50fc03a7"), "/p")
    assert not place.matches("other.h", 7, fp("11111111"), "/p")
    by_fp = key_test("rec@50fc03a7", keys)
    assert by_fp is not None and by_fp.fingerprint == "50fc03a7" and by_fp.others == set()
    assert by_fp.matches("anywhere.h", 1, fp("50fc03a7"))
    assert not by_fp.matches("samedef_rec.h", 7, fp("11111111"))
    assert fingerprint_of("50FC03A7") == "50fc03a7"
    assert fingerprint_of("dict.h:7") is None and fingerprint_of("5fc03a7") is None
