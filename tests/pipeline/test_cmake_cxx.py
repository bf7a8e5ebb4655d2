"""A CMake C++ project built with CMAKE_CXX_COMPILER=cachefit-c++ (Makefiles and Ninja
generators) in plain, profile and optimize mode: same program output; the optimized
program has the plan's flattened and reordered class, the profile build the flattened
class (and its units in CACHEFIT_UNITS_DIR); dependencies name the original header; a
clean rebuild is served from the object cache."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from wrapper_helpers import (
    BIN,
    CACHEFIT,
    PROJECTS,
    cache_stats,
    copy_project,
    layout,
    needs_clang,
    needs_gcc,
    order_by_offset,
    run,
    wrapper_env,
)

PLAN = json.loads((PROJECTS / "cmake_cxx" / "plan.json").read_text())
DECLARED = ["id_", "w_", "hits_", "kind_", "last_", "key_", "flag_", "next_"]
GENERATORS = [pytest.param("Unix Makefiles", id="make"),
              pytest.param("Ninja", id="ninja",
                           marks=pytest.mark.skipif(shutil.which("ninja") is None,
                                                    reason="ninja is not installed"))]
pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or
                                not (BIN / "cachefit-c++").exists(),
                                reason="needs cmake and the cachefit-c++ console script "
                                       "(pip install -e .)")


def _build(work: Path, build: str, generator: str, env: dict[str, str]) -> Path:
    b = work / build
    run(["cmake", "-S", str(work), "-B", str(b), "-G", generator,
         f"-DCMAKE_CXX_COMPILER={BIN / 'cachefit-c++'}", "-DCMAKE_BUILD_TYPE=Release"],
        work, env)
    run(["cmake", "--build", str(b)], work, env)
    return b


def _env(tmp: Path, work: Path, mode: str, cxx: str = "g++", **extra: str) -> dict[str, str]:
    return wrapper_env(tmp, mode, CACHEFIT_CXX=cxx,
                       CACHEFIT_CONFIG=str(work / "cachefit.toml"), **extra)


@needs_gcc
@pytest.mark.parametrize("generator", GENERATORS)
def test_three_modes(generator: str, tmp_path: Path) -> None:
    work = copy_project("cmake_cxx", tmp_path / "p")
    outputs, layouts = {}, {}
    units = tmp_path / "units"
    for mode in ("plain", "profile", "optimize"):
        env = _env(tmp_path, work, mode, CACHEFIT_UNITS_DIR=str(units / mode))
        b = _build(work, f"build-{mode}", generator, env)
        outputs[mode] = run([str(b / "demo")], work, env).stdout
        layouts[mode] = layout(run([str(b / "demo"), "--layout"], work, env).stdout)
    assert outputs["plain"] == outputs["profile"] == outputs["optimize"]
    assert outputs["plain"].startswith("schedule ")
    assert order_by_offset(layouts["plain"]) == DECLARED
    # profile: flattened (no base subobjects, no vtable pointer), order unchanged
    assert order_by_offset(layouts["profile"]) == DECLARED
    assert layouts["profile"]["sizeof"] < layouts["plain"]["sizeof"]
    assert layouts["profile"]["id_"] == 0
    # optimize: flattened and in the plan's order
    assert order_by_offset(layouts["optimize"]) == PLAN["records"]["node"]["order"]
    assert layouts["optimize"]["sizeof"] < layouts["profile"]["sizeof"]

    # the profile build kept each unit, flattened, with the arguments that parse it
    assert not (units / "plain").exists()
    (sched,) = (units / "profile").glob("sched-*.ii")
    meta = json.loads(sched.with_suffix(".json").read_text())
    assert meta["source"] == str(work / "sched.cc") and meta["language"] == "c++"
    shown = json.loads(run([CACHEFIT, "show", "node", str(sched), "--json", "--",
                            *meta["args"][2:]], work, env).stdout)
    assert shown["bases"] == [] and shown["vptr_offset"] is None
    assert [f["name"] for f in shown["fields"]] == DECLARED
    # optimize mode kept the transformed units only (util.cc has no node)
    assert sorted(p.name.split("-")[0] for p in (units / "optimize").glob("*.ii")) == \
        ["main", "sched"]


@needs_gcc
@pytest.mark.parametrize("generator", GENERATORS)
def test_header_dependencies_and_cached_rebuild(generator: str, tmp_path: Path) -> None:
    work = copy_project("cmake_cxx", tmp_path / "p")
    env = _env(tmp_path, work, "optimize")
    b = _build(work, "build", generator, env)
    objdir = b / "CMakeFiles" / "demo.dir"
    objects = {n: objdir / f"{n}.cc.o" for n in ("main", "sched", "util")}
    if generator == "Ninja":
        deps = run(["ninja", "-t", "deps"], b, env).stdout
        block = deps.split("CMakeFiles/demo.dir/main.cc.o:", 1)[1].split("\n\n", 1)[0]
    else:
        block = (objdir / "main.cc.o.d").read_text()
    assert str(work / "node.h") in block and str(work / "main.cc") in block
    assert "cachefit-" not in block

    stamp = {n: o.stat().st_mtime_ns for n, o in objects.items()}
    later = time.time() + 5
    os.utime(work / "node.h", (later, later))
    run(["cmake", "--build", str(b)], work, env)
    changed = {n for n, o in objects.items() if o.stat().st_mtime_ns != stamp[n]}
    assert changed == {"main", "sched"}

    expected = run([str(b / "demo")], work, env).stdout
    before = cache_stats(env, work)
    run(["cmake", "--build", str(b), "--target", "clean"], work, env)
    assert not any(o.exists() for o in objects.values())
    run(["cmake", "--build", str(b)], work, env)
    after = cache_stats(env, work)
    assert after["hits"] - before["hits"] == 3 and after["misses"] == before["misses"]
    assert run([str(b / "demo")], work, env).stdout == expected


@needs_clang
def test_optimize_with_clang(tmp_path: Path) -> None:
    work = copy_project("cmake_cxx", tmp_path / "p")
    plain = _build(work, "plain", "Unix Makefiles", _env(tmp_path, work, "plain", "clang++-19"))
    env = _env(tmp_path, work, "optimize", "clang++-19")
    b = _build(work, "opt", "Unix Makefiles", env)
    assert run([str(b / "demo")], work, env).stdout == run([str(plain / "demo")], work,
                                                            env).stdout
    shown = layout(run([str(b / "demo"), "--layout"], work, env).stdout)
    assert order_by_offset(shown) == PLAN["records"]["node"]["order"]
