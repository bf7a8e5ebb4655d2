"""The tracing runtime's per-invocation shortcuts and inlined fast path give exact profiles.

The runtime arms the previous invocation's role 0 as the fast role when an invocation
begins, appends the fast role's quads from code inlined into instrumented functions
(clang), and leaves a one-object invocation's role armed for the next one (a two-object
invocation's two roles, numbered again by first touch when the next one ends). The program
tests/trace/programs/fastpath.c has phases where each shortcut would record a wrong role,
type or count if it outlived the state it was taken from (another object first, another
type first, a sequence longer than max_accesses, a summary since issue 26, objects taken
in turn across invocations and, with the two fast roles the inlined path checks, within
one, the fast role's object forgotten and re-registered as another type inside the
invocation). The profile must hold exactly
the expected sequences with clang (checks inlined, at -O0 and -O2, and as calls) and gcc
(the tsan callbacks), and the program must print the same in every build.
"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    HAVE_CLANG,
    HAVE_GCC,
    build,
    calls_in,
    run,
    seqs,
)

from cachefit.model.profile import Access, Profile

R, W = "r", "w"
ONE = ((0, 8, 8, R), (0, 16, 1, W))
TWO = ((0, 0, 4, W), (1, 0, 4, W), (0, 8, 8, R), (1, 8, 8, W))
TURNS = ((0, 0, 4, W), (1, 0, 4, W), (0, 8, 8, R), (1, 8, 8, W), (0, 16, 1, R), (1, 16, 1, W),
         (1, 0, 4, R), (2, 0, 4, W), (0, 8, 8, W), (1, 16, 1, W), (2, 16, 1, W), (0, 0, 4, R))
CONFIG = "max_accesses = 50\n"
ENTRY = ["one", "two", "mixed", "spin", "retype", "turns"]


def check(prof: Profile) -> None:
    assert seqs(prof, "obj") == {
        ONE: 3 + 17 + 17 + 1 + 30 + 5 + 2,
        TWO: 1 + 40 + 30,
        TURNS: 30 + 5,               # the same roles whichever object comes first
        ((0, 0, 4, W),): 1 + 1,      # mixed: role 0 of obj although other came first;
                                     # spin: 100 writes, a summary
        ((0, 8, 8, R),): 2,          # retype before the forget
    }
    assert seqs(prof, "other") == {
        ((0, 16, 4, W),): 1,         # mixed
        ((0, 8, 8, R),): 2,          # retype after the memory became an other
    }
    spin = [(s.count, s.accesses, s.hits) for s in prof.types["obj"].sequences
            if s.entry == "spin"]
    assert spin == [(1, ((Access(0, 0, 4, W)),), (100,))]
    assert prof.types["obj"].runaway == 0
    assert prof.types["other"].runaway == 0
    assert prof.types["obj"].outside_objects == prof.types["other"].outside_objects == 0
    assert prof.invocations == 3 + 1 + 17 + 1 + 17 + 1 + 1 + 60 + 40 + 40 + 4


VARIANTS = [
    pytest.param("clang-19", ("-O0", "-g"), "1", id="clang-O0",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")),
    pytest.param("clang-19", ("-O2", "-g", "-fno-strict-aliasing"), "1", id="clang-O2",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")),
    pytest.param("clang-19", ("-O2", "-g", "-fno-strict-aliasing"), "0", id="clang-O2-calls",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 is not installed")),
    pytest.param("gcc", ("-O2", "-g", "-fno-strict-aliasing"), "1", id="gcc-O2",
                 marks=pytest.mark.skipif(not HAVE_GCC, reason="gcc is not installed")),
]


@pytest.mark.parametrize(("compiler", "flags", "inline"), VARIANTS)
def test_shortcuts_keep_the_profile_exact(tmp_path: Path, compiler: str,
                                          flags: tuple[str, ...], inline: str) -> None:
    b = build(tmp_path, ["fastpath.c"], types=["obj", "other"], entry=ENTRY,
              compiler=compiler, config_extra=CONFIG, flags=flags)
    if inline == "0":
        env = dict(b.env, CACHEFIT_MODE="profile", CACHEFIT_CC=compiler,
                   CACHEFIT_INLINE_CHECKS="0")
        run([*CACHEFIT, "cc", *flags, "fastpath.c", "-o", "prog"], tmp_path, env)
    elif compiler.startswith("clang") and "-O2" in flags:
        # one() appends its quads itself; the runtime is called only off the fast path
        # (on x86-64 through the entry point that preserves the caller's registers).
        calls = calls_in(b.program, "one")
        assert "__sanitizer_cov_" not in calls
        assert "__cachefit_access" in calls
        if platform.machine() == "x86_64":
            assert "__cachefit_access_pm" in calls
    check(b.trace())
    assert b.run() == "1 2 3 0\n"
