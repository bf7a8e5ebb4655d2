"""Two records with one tag in one program stay two types (issue 27, item 4).

tests/trace/programs/twodefs_*: the program's `struct dict` (twodefs_a.h, 64 bytes) and a
library's `struct dict` with other members (twodefs_b.h, 32 bytes), each allocated and
touched by its own unit, the library's also as a global. Traced as `dict`, the profile
has one type per definition, keyed `dict@file:line`, each with its own layout and exactly
its own accesses; `[trace] types` can name one definition; a layout plan keyed by a
definition reorders that record only, in the unit that defines it (the program prints
sizeof and offsetof from both units). The same with anonymous records named `dict_t` by
two typedefs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    HAVE_CLANG,
    PROGRAMS,
    assert_definitions,
    build,
    compiler_params,
    env_for,
    fields_of,
    run,
    seqs,
)
from twodefs_expected import FIELDS_A, FIELDS_B, ORDER_A, ORDER_B, SEQ_A, SEQ_B, R, W

from cachefit.model.profile import load
from cachefit.model.type_names import (
    definition_matches,
    plain_type_name,
    split_definition,
    traced_as,
)
from cachefit.trace.alloc_sites import UNCONVERTED, SiteNote, missed_notes, type_notes

SOURCES = ["twodefs_main.c", "twodefs_lib.c"]
A, B = "dict@twodefs_a.h:4", "dict@twodefs_b.h:3"
ENTRY = ["op_main", "op_lib"]
DECLARED = "main 64 0 8 16 24\nlib 32 0 8 16 24\n"
COMPILERS = compiler_params("clang-19", "gcc")


def _copy_headers(tmp: Path) -> None:
    for h in ("twodefs_a.h", "twodefs_b.h"):
        shutil.copy(PROGRAMS / h, tmp / h)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_two_definitions_are_two_types(tmp_path: Path, compiler: str) -> None:
    _copy_headers(tmp_path)
    b = build(tmp_path, SOURCES, types=["dict"], entry=ENTRY, compiler=compiler)
    assert ("type dict: 2 different definitions of dict, traced as 2 types: "
            f"{A}, {B} (name one in [trace] types to trace only it)") in b.compile_stderr
    assert b.run() == DECLARED
    p = b.trace()
    assert_definitions(p, {A: (64, FIELDS_A, SEQ_A), B: (32, FIELDS_B, SEQ_B)})
    assert p.invocations == 6


@pytest.mark.parametrize(("chosen", "seq", "fields"), [
    ("dict@twodefs_b.h", SEQ_B, FIELDS_B),
    ("dict@twodefs_a.h:4", SEQ_A, FIELDS_A),
])
@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_types_can_name_one_definition(tmp_path: Path, chosen: str, seq: object,
                                       fields: list[tuple[str, int, int]]) -> None:
    """`[trace] types = ["dict@twodefs_b.h"]` traces the library's dict only (the other
    definition's objects are not registered: no type, no accesses), under that name."""
    _copy_headers(tmp_path)
    b = build(tmp_path, SOURCES, types=[chosen], entry=ENTRY)
    assert "different definitions" not in b.compile_stderr
    p = b.trace()
    assert list(p.types) == [chosen]
    assert fields_of(p.types[chosen]) == fields
    assert seqs(p, chosen) == seq


def _optimize(tmp: Path, compiler: str, records: dict[str, list[str]]) -> tuple[str, str]:
    """Build the program in optimize mode with a plan of `records` and run it: its output
    and the build's messages."""
    _copy_headers(tmp)
    for s in SOURCES:
        shutil.copy(PROGRAMS / s, tmp / s)
    plan = {"format": "cachefit-layout-plan", "version": 1,
            "records": {k: {"order": v} for k, v in records.items()}}
    (tmp / "plan.json").write_text(json.dumps(plan))
    (tmp / "cachefit.toml").write_text('[trace]\ntypes = ["dict"]\nentry = ["op_main"]\n')
    env = env_for(tmp, CACHEFIT_MODE="optimize", CACHEFIT_CC=compiler,
                  CACHEFIT_LAYOUTS=str(tmp / "plan.json"))
    built = run([*CACHEFIT, "cc", "-O0", "-g", *SOURCES, "-o", "prog"], tmp, env)
    return run([str(tmp / "prog")], tmp, env).stdout, built.stderr


@pytest.mark.parametrize("compiler", COMPILERS)
def test_each_plan_applies_to_its_own_definition(tmp_path: Path, compiler: str) -> None:
    """Plans for both definitions: each unit's dict gets its own order (main: name 0,
    rehashidx 40, pause 44, used 48, type 56; lib: privdata 0, used 8, size 16, table
    24), sizes unchanged."""
    out, messages = _optimize(tmp_path, compiler, {A: ORDER_A, B: ORDER_B})
    assert out == "main 64 56 48 40 0\nlib 32 24 16 8 0\n"
    assert messages == ""


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_a_plan_for_one_definition_leaves_the_other(tmp_path: Path) -> None:
    """A plan for the library's dict only: the program's dict keeps its declared order
    (with no warning: it is another record), the library's is reordered."""
    out, messages = _optimize(tmp_path, "clang-19", {B: ORDER_B})
    assert out == "main 64 0 8 16 24\nlib 32 24 16 8 0\n"
    assert messages == ""


def test_definition_keys() -> None:
    assert split_definition(B) == ("dict", "twodefs_b.h:3")
    assert split_definition("dict") == ("dict", None)
    assert plain_type_name("dict@deps/hiredis/dict.h:55") == "dict"
    cwd = "/src/redis/src"
    assert definition_matches("deps/hiredis/dict.h:55", "../deps/hiredis/dict.h", 55, cwd)
    assert definition_matches("deps/hiredis/dict.h", "../deps/hiredis/dict.h", 9, cwd)
    assert not definition_matches("deps/hiredis/dict.h:55", "../deps/hiredis/dict.h", 54, cwd)
    assert not definition_matches("deps/hiredis/dict.h:55", "dict.h", 55, cwd)
    assert not definition_matches("hiredis/dict.h", "../deps/xhiredis/dict.h", 1, cwd)
    assert definition_matches("/usr/include/x.h:3", "/usr/include/x.h", 3, cwd)


def test_missed_note_of_one_definition_lists_the_name_s_sites() -> None:
    """A definition's type with no object registered: the sites noted under the plain
    name (the notes do not tell definitions apart) are named, with the line to add."""
    notes = [SiteNote("dict", "deps/hiredis/dict.c", 72, "hi_malloc", UNCONVERTED),
             SiteNote("other", "x.c", 3, "xmalloc", UNCONVERTED)]
    assert type_notes("dict@deps/hiredis/dict.h:55", False, notes, 0) == [
        "dict@deps/hiredis/dict.h:55: no object of dict@deps/hiredis/dict.h:55 was "
        "registered; not registered: deps/hiredis/dict.c:72 (hi_malloc) (its size is "
        "sizeof(dict), but its result is not used as a pointer to dict); to register the "
        'objects they return, add `allocators = ["hi_malloc"]` to [trace] in cachefit.toml']


def test_traced_as() -> None:
    keys = [A, "obj", B, "dict@x.h"]
    assert traced_as("dict", keys) == [A, B, "dict@x.h"]
    assert traced_as("obj", keys) == ["obj"]
    assert traced_as(A, keys) == [A]
    assert traced_as("dic", keys) == []


def _typedef_variant(tmp: Path) -> None:
    """The program with `typedef struct { ... } dict_t;` in both headers (anonymous
    records named by one typedef name)."""
    for name in ("twodefs_a.h", "twodefs_b.h", *SOURCES):
        text = (PROGRAMS / name).read_text()
        text = text.replace("struct dict {", "typedef struct {").replace("\n};", "\n} dict_t;")
        (tmp / name).write_text(text.replace("struct dict", "dict_t"))


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_typedef_named_definitions(tmp_path: Path) -> None:
    """Two anonymous records named `dict_t` by typedefs: two types keyed by the line of
    `typedef struct {`, each with its own profile (the library's global included); a plan
    for one applies to its unit only."""
    _typedef_variant(tmp_path)
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19")
    (tmp_path / "cachefit.toml").write_text(
        '[trace]\ntypes = ["dict_t"]\nentry = ["op_main", "op_lib"]\n')
    built = run([*CACHEFIT, "cc", "-O0", "-g", *SOURCES, "-o", "prog"], tmp_path, env)
    assert "2 different definitions of dict_t" in built.stderr
    run([*CACHEFIT, "trace", "-o", "p.json", "--", str(tmp_path / "prog")], tmp_path,
        env_for(tmp_path))
    p = load(tmp_path / "p.json")
    ta, tb = "dict_t@twodefs_a.h:4", "dict_t@twodefs_b.h:3"
    assert sorted(p.types) == [ta, tb]
    assert (fields_of(p.types[ta]), seqs(p, ta)) == (FIELDS_A, SEQ_A)
    assert (fields_of(p.types[tb]), seqs(p, tb)) == (FIELDS_B, SEQ_B)
    (tmp_path / "plan.json").write_text(json.dumps(
        {"format": "cachefit-layout-plan", "version": 1,
         "records": {tb: {"order": ORDER_B, "expected_size": 32}}}))
    env = env_for(tmp_path, CACHEFIT_MODE="optimize", CACHEFIT_CC="clang-19",
                  CACHEFIT_LAYOUTS=str(tmp_path / "plan.json"))
    run([*CACHEFIT, "cc", "-O0", "-g", *SOURCES, "-o", "opt"], tmp_path, env)
    assert run([str(tmp_path / "opt")], tmp_path, env).stdout == \
        "main 64 0 8 16 24\nlib 32 24 16 8 0\n"


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_a_program_with_one_definition_joins_its_key(tmp_path: Path) -> None:
    """One workload runs the program with both definitions and a program with only the
    library's (whose blob names it plainly `dict`): the second's objects count for
    dict@twodefs_b.h:3, the definition with its layout (3 + 2 invocations of op_lib)."""
    _copy_headers(tmp_path)
    b = build(tmp_path, SOURCES, types=["dict"], entry=ENTRY)
    shutil.copy(PROGRAMS / "twodefs_libmain.c", tmp_path / "twodefs_libmain.c")
    solo = run([*CACHEFIT, "cc", "-O0", "-g", "twodefs_libmain.c", "twodefs_lib.c", "-o",
                "solo"], tmp_path, {**b.env, "CACHEFIT_MODE": "profile",
                                    "CACHEFIT_CC": "clang-19"})
    assert "different definitions" not in solo.stderr
    p = b.trace(command=["/bin/sh", "-c", "./prog && ./solo"])
    assert sorted(p.types) == [A, B]
    assert seqs(p, A) == SEQ_A
    assert seqs(p, B) == {((0, 24, 8, W), (0, 8, 8, R)): 5}
    assert p.metadata["registered"] == {A: 1, B: 4}


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_missed_note_names_the_definition_s_own_sites(tmp_path: Path) -> None:
    """The allocation-site notes carry the unit's definition (`dict@FP`) and the program's
    blob maps it to the type: a definition with no object is told of its own sites only
    (the library's malloc, not the program's calloc of the other dict)."""
    _copy_headers(tmp_path)
    b = build(tmp_path, SOURCES, types=["dict"], entry=ENTRY)
    p = b.trace()
    assert missed_notes(p) == []
    p.types[B].sequences = []
    p.metadata["registered"] = {A: 1, B: 0}
    assert missed_notes(p) == [f"{B}: no object of {B} was registered; objects are "
                               "registered at twodefs_lib.c:19 (malloc) (none of them ran)"]
