"""Two C++ classes with one name in one program stay two types (issue 27, item 4, C++).

tests/trace/programs/cxx_twodefs_*.cc: each unit defines its own `Node` in an anonymous
namespace (legal C++: two classes), the program's (64 bytes, from a new-expression) and a
library's with other members (32 bytes, from a new-expression and a global), each touched
by its own entry function. Traced as `Node`, the profile has one type per definition,
keyed `Node@file:line`, each with its own layout and exactly its own accesses (before:
the heap objects of both under one `Node` with no layout, the global under the library's
key); a polymorphic variant (the library's Node with a virtual destructor, its vtable
pointer at 0) is told apart alike; a layout plan keyed by a definition reorders that class
only, in the unit that defines it (the program prints sizeof and offsetof from both units).
Built by clang++-19 and g++.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    HAVE_CLANG,
    PROGRAMS,
    Built,
    assert_definitions,
    compiler_params,
    env_for,
    fields_of,
    run,
    seqs,
)
from twodefs_expected import FIELDS_A, FIELDS_B, ORDER_A, ORDER_B, SEQ_A, SEQ_B, R, W

SOURCES = ["cxx_twodefs_a.cc", "cxx_twodefs_b.cc"]
A, B = "Node@cxx_twodefs_a.cc:8", "Node@cxx_twodefs_b.cc:8"
ENTRY = '[trace]\ntypes = ["Node"]\nentry = ["op_a", "op_b"]\n'
DECLARED = "a 64 0 8 16 24\nb 32 0 8 16 24\n"
COMPILERS = compiler_params("clang++-19", "g++")


def _build(tmp: Path, compiler: str, *, mode: str = "profile", plan: dict[str, list[str]]
           | None = None, virtual: bool = False) -> Built:
    """Copy the two units into `tmp` (the library's Node with a virtual destructor when
    `virtual`) and build them through `cachefit c++` in `mode` (with a plan of `plan`)."""
    for s in SOURCES:
        text = (PROGRAMS / s).read_text()
        if virtual and s == SOURCES[1]:
            text = text.replace("    void *privdata;\n",
                                "    void *privdata;\n    virtual ~Node() {}\n")
        (tmp / s).write_text(text)
    (tmp / "cachefit.toml").write_text(ENTRY)
    extra = {"CACHEFIT_MODE": mode, "CACHEFIT_CXX": compiler}
    if plan is not None:
        (tmp / "plan.json").write_text(json.dumps(
            {"format": "cachefit-layout-plan", "version": 1,
             "records": {k: {"order": v} for k, v in plan.items()}}))
        extra["CACHEFIT_LAYOUTS"] = str(tmp / "plan.json")
    built = run([*CACHEFIT, "c++", "-O0", "-g", *SOURCES, "-o", "prog"], tmp,
                env_for(tmp, **extra))
    return Built(tmp, tmp / "prog", env_for(tmp), built.stderr)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_two_definitions_are_two_types(tmp_path: Path, compiler: str) -> None:
    b = _build(tmp_path, compiler)
    assert ("type Node: 2 different definitions of Node, traced as 2 types: "
            f"{A}, {B} (name one in [trace] types to trace only it)") in b.compile_stderr
    assert b.run() == DECLARED
    p = b.trace()
    assert_definitions(p, {A: (64, FIELDS_A, SEQ_A), B: (32, FIELDS_B, SEQ_B)})
    assert p.metadata["registered"] == {A: 1, B: 2}
    assert p.invocations == 6


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_polymorphic_definition_is_told_apart(tmp_path: Path, compiler: str) -> None:
    """The library's Node with a virtual destructor (40 bytes, the vtable pointer at 0,
    which the debug information lists as an artificial member and libclang does not):
    its objects are still its own type, the accesses 8 bytes further on."""
    b = _build(tmp_path, compiler, virtual=True)
    p = b.trace()
    assert sorted(p.types) == [A, B]
    assert fields_of(p.types[B]) == [("<vptr>", 0, 8)] + [(n, o + 8, s) for n, o, s in FIELDS_B]
    assert seqs(p, A) == SEQ_A
    assert seqs(p, B) == {((0, 32, 8, W), (0, 16, 8, R)): 3}
    assert p.metadata["registered"] == {A: 1, B: 2}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_each_plan_applies_to_its_own_definition(tmp_path: Path, compiler: str) -> None:
    """Plans for both definitions: each unit's Node gets its own order (a: name 0,
    rehashidx 40, pause 44, used 48, type 56; b: privdata 0, used 8, size 16, table 24),
    sizes unchanged, no message."""
    b = _build(tmp_path, compiler, mode="optimize", plan={A: ORDER_A, B: ORDER_B})
    assert b.run() == "a 64 56 48 40 0\nb 32 24 16 8 0\n"
    assert b.compile_stderr == ""


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_a_plan_for_one_definition_leaves_the_other(tmp_path: Path) -> None:
    b = _build(tmp_path, "clang++-19", mode="optimize", plan={B: ORDER_B})
    assert b.run() == "a 64 0 8 16 24\nb 32 24 16 8 0\n"
    assert b.compile_stderr == ""


@pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")
def test_types_can_name_one_definition(tmp_path: Path) -> None:
    """`[trace] types = ["Node@cxx_twodefs_b.cc"]`: the library's Node only."""
    for s in SOURCES:
        shutil.copy(PROGRAMS / s, tmp_path / s)
    (tmp_path / "cachefit.toml").write_text(
        '[trace]\ntypes = ["Node@cxx_twodefs_b.cc"]\nentry = ["op_a", "op_b"]\n')
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CXX="clang++-19")
    built = run([*CACHEFIT, "c++", "-O0", "-g", *SOURCES, "-o", "prog"], tmp_path, env)
    assert "different definitions" not in built.stderr
    p = Built(tmp_path, tmp_path / "prog", env_for(tmp_path), built.stderr).trace()
    assert list(p.types) == ["Node@cxx_twodefs_b.cc"]
    assert fields_of(p.types["Node@cxx_twodefs_b.cc"]) == FIELDS_B
    assert seqs(p, "Node@cxx_twodefs_b.cc") == SEQ_B


LOCAL_A = """long run_b();
long run_a()
{
    struct Node {
        long x;
        int y;
    };
    Node *n = new Node();
    n->x = 1;
    long r = n->y;
    delete n;
    return r;
}
int main() { return (int)(run_a() + run_b()); }
"""


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_local_class_is_refused(tmp_path: Path, compiler: str) -> None:
    """`Node` a local class of a function (legal in two units): the debug information's
    records the link step reads do not include it, so its objects could only be filed by
    name; the profile build stops at its definition with the error."""
    (tmp_path / "a.cc").write_text(LOCAL_A)
    (tmp_path / "b.cc").write_text(LOCAL_A.split("long run_a()")[0].replace(
        "long run_b();\n", "long run_b() { return 0; }\n"))
    (tmp_path / "cachefit.toml").write_text(
        '[trace]\ntypes = ["Node"]\nentry = ["run_a", "run_b"]\n')
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CXX=compiler)
    proc = subprocess.run([*CACHEFIT, "c++", "-O0", "-g", "a.cc", "b.cc", "-o", "prog"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr == (
        "cachefit: error: a.cc:4:12: [trace] types: Node names a class defined inside the "
        "function run_a, which cachefit cannot trace; define it outside the function or "
        "trace another type\n")
    assert not (tmp_path / "prog").exists()
