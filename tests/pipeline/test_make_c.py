"""A multi-file C project built by make with CC="cachefit cc" in plain, profile and
optimize mode: same program output, the plan's layout in the optimized program,
dependency files naming the original header, rebuilds on header changes, and a
clean rebuild served entirely from the object cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from wrapper_helpers import (
    CACHEFIT,
    COMPILERS,
    MAKE_C_DECLARED,
    MAKE_C_PLAN,
    cache_stats,
    copy_project,
    layout,
    needs_gcc,
    order_by_offset,
    run,
    wrapper_env,
)

PLAN = MAKE_C_PLAN
DECLARED = MAKE_C_DECLARED
MAKE = ["make", f"CC={CACHEFIT} cc"]


def _build(tmp: Path, mode: str, cc: str, name: str) -> tuple[Path, dict[str, str]]:
    work = copy_project("make_c", tmp / name)
    env = wrapper_env(tmp, mode, CACHEFIT_CC=cc)
    run(MAKE, work, env)
    return work, env


@pytest.mark.parametrize("cc", COMPILERS)
def test_three_modes_same_output_new_layout(cc: str, tmp_path: Path) -> None:
    outputs = {}
    layouts = {}
    for mode in ("plain", "profile", "optimize"):
        work, env = _build(tmp_path, mode, cc, mode)
        outputs[mode] = run([str(work / "prog")], work, env).stdout
        layouts[mode] = layout(run([str(work / "prog"), "--layout"], work, env).stdout)
    assert outputs["plain"] == outputs["profile"] == outputs["optimize"]
    assert "total" in outputs["plain"]
    assert order_by_offset(layouts["plain"]) == DECLARED
    assert order_by_offset(layouts["profile"]) == DECLARED
    plan = PLAN["records"]["item"]
    assert order_by_offset(layouts["optimize"]) == plan["order"]
    assert layouts["optimize"]["sizeof"] == plan["expected_size"] < layouts["plain"]["sizeof"]


@needs_gcc
def test_dependencies_rebuilds_and_cache(tmp_path: Path) -> None:
    work, env = _build(tmp_path, "optimize", "gcc", "w")
    objects = [work / f"{n}.o" for n in ("main", "item", "list")]
    for obj in objects:
        deps = obj.with_suffix(".d").read_text()
        target, prereqs = deps.split(":", 1)
        assert target == obj.name
        words = prereqs.replace("\\\n", " ").split("\n")[0].split()
        assert words[0] == obj.with_suffix(".c").name and "item.h" in words
        assert "cachefit-" not in deps and ".i " not in deps
    first = cache_stats(env, work)
    assert (first["hits"], first["misses"]) == (0, 3)
    assert run(["make", "-q", f"CC={CACHEFIT} cc"], work, env, ok=False).returncode == 0

    stamp = {o: o.stat().st_mtime_ns for o in objects}
    later = time.time() + 5
    os.utime(work / "item.h", (later, later))
    assert run(["make", "-q", f"CC={CACHEFIT} cc"], work, env, ok=False).returncode != 0
    run(MAKE, work, env)
    assert all(o.stat().st_mtime_ns != stamp[o] for o in objects)
    # the header's timestamp changed, its text did not: served from the cache
    second = cache_stats(env, work)
    assert (second["hits"], second["misses"]) == (3, 3)

    expected = run([str(work / "prog")], work, env).stdout
    run(["make", "clean"], work, env)
    assert not any(o.exists() for o in objects)
    build = run(MAKE, work, env)
    third = cache_stats(env, work)
    assert (third["hits"], third["misses"]) == (6, 3), build.stderr
    assert run([str(work / "prog")], work, env).stdout == expected
    assert order_by_offset(layout(run([str(work / "prog"), "--layout"], work, env).stdout)) \
        == PLAN["records"]["item"]["order"]

    # a comment is gone after preprocessing: still hits; a real change misses for every
    # unit that includes the header
    h = work / "item.h"
    h.write_text(h.read_text().replace("long id;", "long id;  /* the key */"))
    run(MAKE, work, env)
    fourth = cache_stats(env, work)
    assert (fourth["hits"], fourth["misses"]) == (9, 3)
    h.write_text(h.read_text().replace("int count;", "unsigned count;"))
    run(MAKE, work, env)
    fifth = cache_stats(env, work)
    assert (fifth["hits"], fifth["misses"]) == (9, 6)
    assert run([str(work / "prog")], work, env).stdout == expected
