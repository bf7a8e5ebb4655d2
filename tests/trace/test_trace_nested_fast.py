"""The short path of a nested invocation leaves the raw trace as the general one does.

A nested invocation one level deep whose accesses all go to the outer invocation's one
object of the fast role's type (zlib's `longest_match` in `deflate`) starts and ends on a
path of its own (runtime/src/cf_core.c, `cf_nest_enter1` and `cf_leave_nested1`);
`CACHEFIT_NEST_FAST=0` sends it through the general path. Each program of
tests/trace/programs with nested entries runs both ways: the raw traces must be the same
byte for byte but for the process's own lines (pid, times, path). The programs take both
paths: nested_defer.c's inner() on the outer object (short) and on a second one
(general), nested.c's recursion and second roles, nested_longjmp.c's jumps out of nested
invocations, nested_objects.c's roles beyond max_objects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, compiler_params, run

OWN = (b"pid ", b"ppid ", b"wall_ns ", b"exe ", b"self ")

CASES = {
    "defer": ("nested_defer.c", ["rec"], ["outer", "inner"], {"CACHEFIT_MAX_ACCESSES": "4"}),
    "defer_long": ("nested_defer.c", ["rec"], ["outer", "inner"], {}),
    "nested": ("nested.c", ["obj"], ["inner", "outer", "rec", "ping", "pong"], {}),
    "longjmp": ("nested_longjmp.c", ["obj"], ["catcher", "thrower", "runner", "reader"], {}),
    "objects": ("nested_objects.c", ["obj"], ["outer", "inner", "wide"], {}),
}


def raw_trace(b: object, directory: Path, env: dict[str, str]) -> bytes:
    directory.mkdir()
    run([str(b.program)], b.directory, {**b.env, **env,  # type: ignore[attr-defined]
                                        "CACHEFIT_TRACE_DIR": str(directory)})
    (raw,) = directory.glob("*.raw")
    return b"\n".join(line for line in raw.read_bytes().split(b"\n")
                      if not line.startswith(OWN))


@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
@pytest.mark.parametrize("case", sorted(CASES))
def test_short_nested_path_keeps_the_raw_trace(tmp_path: Path, compiler: str,
                                               case: str) -> None:
    source, types, entry, env = CASES[case]
    b = build(tmp_path, [source], types=types, entry=entry, compiler=compiler,
              flags=("-O2", "-g"))
    short = raw_trace(b, tmp_path / "short", env)
    general = raw_trace(b, tmp_path / "general", {**env, "CACHEFIT_NEST_FAST": "0"})
    assert b"\nseq " in short
    assert short == general
