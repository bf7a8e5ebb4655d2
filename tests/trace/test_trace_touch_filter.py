"""Issue 31's static filter (cachefit.trace.touch_filter) in clang profile builds.

programs/touch_filter.c and touch_filter.cc touch `rec` / `Rec` by member access, in a
static inline helper inlined into a caller, by memcpy (directly and through a helper that
sees `void *`) and through offsetof-computed byte pointers (directly and through a helper
that sees `int *`). With `instrument = "auto"` (opt-in) the build instruments only the
functions that can touch the type: the profile must equal the one of `instrument = "all"`, and
fib() must not be instrumented (the unit's list and the compiler's ignorelist say so);
checksum() is, since it reads through a `const char *` that another unit could point into a
traced object (test_pointer_leaving_its_unit). Without an `instrument` setting every
function is instrumented, as before the filter.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_helpers import CACHEFIT, env_for, needs_clang, profile_project, run

from cachefit.model.profile import load

CASES = {
    "c": ("touch_filter.c", "rec", False,
          ["touch", "rec_id", "sum_ids", "copy_bytes", "snapshot", "add_to", "weight_of",
           "work", "main", "checksum"],
          ["fib"]),
    "c++": ("touch_filter.cc", "Rec", True,
            ["touch(Rec *)", "rec_id(const Rec *)", "sum_ids(Rec **, int)",
             "copy_bytes(void *, const void *, std::size_t)",
             "snapshot(Rec *, const Rec *)", "add_to(int *, int)", "Rec::bump()",
             "work(Rec **, int)", "weigh(T *)", "checksum(const char *)"],
            ["fib(int)"]),
}

AUTO = 'instrument = "auto"\n'


def _build_and_trace(tmp: Path, source: str, type_name: str, cxx: bool,
                     extra: str) -> tuple[str, str, Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    env = profile_project(tmp, [source], types=[type_name], entry=["work"],
                          compiler="clang++-19" if cxx else "clang-19", cxx=cxx,
                          config_extra=extra)
    env["CACHEFIT_UNITS_DIR"] = str(tmp / "units")
    proc = run([*CACHEFIT, "c++" if cxx else "cc", "-O2", "-g", source, "-o", "prog"], tmp,
               env)
    run([*CACHEFIT, "trace", "-o", "prof.json", "--", str(tmp / "prog")], tmp, env_for(tmp))
    shown = run([*CACHEFIT, "profile", "show", "prof.json"], tmp, env_for(tmp)).stdout
    return proc.stderr, shown, tmp / "prof.json"


@needs_clang
@pytest.mark.parametrize("lang", sorted(CASES))
def test_filtered_profile_equals_all(tmp_path: Path, lang: str) -> None:
    source, type_name, cxx, chosen, left_out = CASES[lang]
    log, shown, prof = _build_and_trace(tmp_path / "filter", source, type_name, cxx, AUTO)
    _log_all, shown_all, prof_all = _build_and_trace(tmp_path / "all", source, type_name,
                                                     cxx, 'instrument = "all"\n')
    # The same profile, sequence for sequence and count for count.
    assert shown == shown_all
    p, q = load(prof), load(prof_all)
    assert p.types[type_name].sequences == q.types[type_name].sequences
    assert p.invocations == q.invocations == 3
    assert p.types[type_name].sequences, "the type was touched"
    # What was chosen: nothing on stderr (a compiler wrapper is quiet); the list beside the
    # unit's copy, the counts in its sidecar.
    assert log == ""
    listing = next((tmp_path / "filter" / "units").glob("*.instrumented.txt")).read_text()
    side = json.loads(next((tmp_path / "filter" / "units").glob("*.json")).read_text())
    counts = side["static_filter"]
    assert 0 < counts["instrumented"] < counts["functions"]
    assert listing.startswith(f"# {source}: {counts['instrumented']} of "
                              f"{counts['functions']} functions instrumented")
    marks = {line[2:].split("  (")[0].split(" [")[0]: line[0]
             for line in listing.splitlines() if line[:1] in "+-"}
    for name in chosen:
        assert marks.get(name) == "+", (name, listing)
    for name in left_out:
        assert marks.get(name) == "-", (name, listing)
    # The compiler's ignorelist names exactly the functions left out, as clang matches
    # them (the plain name in C, the mangled name in C++).
    ignorelists = list((tmp_path / "filter").rglob("ignorelists/*.txt"))
    assert len(ignorelists) == 1
    entries = {line[4:] for line in ignorelists[0].read_text().splitlines()
               if line.startswith("fun:")}
    wanted = {"fib"} if lang == "c" else {"_ZL3fibi"}
    assert wanted <= entries
    assert not entries & ({"touch", "rec_id", "add_to", "copy_bytes", "work"} if lang == "c"
                          else {"_ZL5touchP3Rec", "_Z4workPP3Reci", "_ZL6add_toPii"})


@needs_clang
def test_left_out_functions_have_no_checks(tmp_path: Path) -> None:
    """The functions the filter leaves out hold no sanitizer-coverage call in the object,
    the chosen ones do (the ignorelist reaches the compiler)."""
    _build_and_trace(tmp_path, "touch_filter.c", "rec", False, AUTO)
    env = dict(env_for(tmp_path), CACHEFIT_INLINE_CHECKS="0")
    env.update(profile_project(tmp_path, ["touch_filter.c"], types=["rec"], entry=["work"],
                               config_extra=AUTO))
    env["CACHEFIT_INLINE_CHECKS"] = "0"
    run([*CACHEFIT, "cc", "-O2", "-g", "-c", "touch_filter.c", "-o", "t.o"], tmp_path, env)
    import subprocess
    dis = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", str(tmp_path / "t.o")],
                         capture_output=True, text=True, check=True).stdout
    bodies: dict[str, str] = {}
    for chunk in dis.split("\n\n"):
        head = chunk.strip().splitlines()[:1]
        if head and head[0].endswith(">:"):
            bodies[head[0].split("<")[1].split(">")[0]] = chunk
    assert "__sanitizer_cov_load" not in bodies["fib"]
    assert "__sanitizer_cov_" in bodies["work"]


@needs_clang
def test_default_instruments_every_function(tmp_path: Path) -> None:
    """The filter is opt-in: without an `instrument` setting no ignorelist reaches the
    compiler (every function is instrumented) and no list is written."""
    log, _shown, _prof = _build_and_trace(tmp_path, "touch_filter.c", "rec", False, "")
    assert log == ""
    side = json.loads(next((tmp_path / "units").glob("*.json")).read_text())
    assert "static_filter" not in side
    assert not list(tmp_path.rglob("ignorelists/*.txt"))
    assert not list((tmp_path / "units").glob("*.instrumented.txt"))


@needs_clang
def test_pointer_leaving_its_unit(tmp_path: Path) -> None:
    """An untyped pointer into a traced object that leaves its unit (`&o->b` as `long *`,
    the object as `const void *`, a `long *` stored in an array) reaches functions of a
    unit that cannot see the traced type: they are instrumented all the same, and the
    profile equals the one of `instrument = "all"` (the write of add_long, the reads of
    first_byte and sum_longs included)."""
    sources = ["touch_filter_escape.c", "touch_filter_helpers.c"]
    shown = {}
    for variant, extra in (("auto", AUTO), ("all", 'instrument = "all"\n')):
        d = tmp_path / variant
        d.mkdir()
        env = profile_project(d, sources, types=["obj"], entry=["work"], config_extra=extra)
        env["CACHEFIT_UNITS_DIR"] = str(d / "units")
        run([*CACHEFIT, "cc", "-O2", "-g", *sources, "-o", "prog"], d, env)
        run([*CACHEFIT, "trace", "-o", "prof.json", "--", str(d / "prog")], d, env_for(d))
        shown[variant] = run([*CACHEFIT, "profile", "show", "prof.json"], d,
                             env_for(d)).stdout
        if variant == "auto":
            p = load(d / "prof.json")
    assert shown["auto"] == shown["all"]
    modes = {(a.offset, a.mode) for s in p.types["obj"].sequences for a in s.accesses}
    assert (8, "w") in modes and (0, "r") in modes, modes
    listing = next((tmp_path / "auto" / "units").glob("touch_filter_helpers-*"
                                                       ".instrumented.txt")).read_text()
    marks = {line[2:].split("  (")[0]: line[0] for line in listing.splitlines()
             if line[:1] in "+-"}
    assert marks["add_long"] == marks["first_byte"] == marks["sum_longs"] == "+", listing
    assert marks["triple"] == "-", listing
