"""The clang backend's inlined first checks, and profile-built shared libraries.

The two-step compile (cachefit.trace.sancov_inline) must remove the calls of
__sanitizer_cov_* from instrumented code without changing any profile, and must fall
back to one step when the flags do not allow it. A profile-built shared library uses
the executable's runtime (one registry).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    build,
    calls_in,
    env_for,
    needs_clang,
    profile_project,
    run,
    seqs,
)

from cachefit.model.profile import load
from cachefit.trace.sancov_inline import MAX_INLINE_FUNCTION, inline_bitcode, plan

R, W = "r", "w"


@needs_clang
def test_inlined_checks_leave_no_callback_calls_and_the_same_profile(tmp_path: Path) -> None:
    (tmp_path / "inl").mkdir()
    (tmp_path / "calls").mkdir()
    inl = build(tmp_path / "inl", ["roles.c"], types=["obj"], entry=["op", "outer"],
                flags=("-O2", "-g"))
    calls = build(tmp_path / "calls", ["roles.c"], types=["obj"], entry=["op", "outer"],
                  flags=("-O2", "-g"))
    # The same build again with the checks left as calls (the build before inlining).
    env = dict(calls.env, CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19",
               CACHEFIT_INLINE_CHECKS="0")
    run([*CACHEFIT, "cc", "-O2", "-g", "roles.c", "-o", "prog"], calls.directory, env)
    assert "__sanitizer_cov_" not in calls_in(inl.program, "op")
    assert "__cachefit_access" in calls_in(inl.program, "op")
    assert "__sanitizer_cov_" in calls_in(calls.program, "op")
    p1, p2 = inl.trace(), calls.trace()
    assert seqs(p1, "obj") == seqs(p2, "obj")
    assert p1.invocations == p2.invocations == 9
    assert inl.run() == calls.run()


def test_inline_plan_falls_back_for_lto_and_other_instrumentation() -> None:
    env = {"CACHEFIT_INLINE_CHECKS": "1"}
    assert plan(["clang-19"], ["-O2", "-flto=thin"], env).bitcode is None
    assert plan(["clang-19"], ["-fsanitize=address"], env).bitcode is None
    assert plan(["clang-19"], ["-O2"], {"CACHEFIT_INLINE_CHECKS": "0"}).bitcode is None


def test_inline_plan_falls_back_for_a_huge_function() -> None:
    # Issue 29 (profile build of big units): inlined checks in a function of tens of
    # thousands of cursors (sqlite3VdbeExec) made step 2 take minutes; one step, a warning.
    env = {"CACHEFIT_INLINE_CHECKS": "1"}
    step = plan(["clang-19"], ["-O2"], env, None, ("vdbe_exec", MAX_INLINE_FUNCTION + 1))
    assert step.bitcode is None
    assert "vdbe_exec is too big for inlined access checks" in step.warning
    assert "the same profile" in step.warning


@needs_clang
def test_shared_library_uses_the_executables_runtime(tmp_path: Path) -> None:
    # op() and make() live in a profile-built shared library; the executable links the
    # runtime and exports its entry points and state, so the library's accesses and its
    # heap object land in the one registry (the global `shared` is the executable's).
    env = profile_project(tmp_path, ["multi_main.c", "multi_lib.c"], types=["obj"],
                          entry=["op"])
    run([*CACHEFIT, "cc", "-O2", "-g", "-fPIC", "-shared", "multi_lib.c", "-o", "libobj.so"],
        tmp_path, env)
    run([*CACHEFIT, "cc", "-O2", "-g", "multi_main.c", "-L.", "-lobj", "-Wl,-rpath,$ORIGIN",
         "-o", "prog"], tmp_path, env)
    lib_calls = calls_in(tmp_path / "libobj.so", "op")
    assert "__cachefit_access" in lib_calls
    # -fPIC without -fPIE: no preserve_most call through the PLT (issue 26)
    assert "__cachefit_access_pm" not in lib_calls
    run([*CACHEFIT, "trace", "-o", "p.json", "--", "./prog"], tmp_path, env_for(tmp_path))
    prof = load(tmp_path / "p.json")
    assert seqs(prof, "obj") == {((0, 0, 4, R), (0, 0, 4, W)): 3}
    assert prof.invocations == 3


@needs_clang
def test_inline_bitcode_is_built_with_the_units_code_model(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 26: the bitcode was built with the compiler's default code model for every
    # unit (PIE on Debian's clang), so cf_sancov_inline.c's __PIC__/__PIE__ test chose the
    # preserve_most call for -fPIC (shared-library) units too.
    monkeypatch.setenv("CACHEFIT_CACHE_DIR", str(tmp_path))
    env = {"CACHEFIT_INLINE_CHECKS": "1"}

    def callee(flags: list[str]) -> tuple[Path, str]:
        bc = inline_bitcode(["clang-19"], ["-O2", *flags], env)
        ir = subprocess.run(["llvm-dis-19", str(bc), "-o", "-"], capture_output=True,
                            text=True, check=True).stdout
        pm = "preserve_mostcc void @__cachefit_access_pm(" in ir
        plain = "@__cachefit_access(" in ir
        assert pm != plain, ir[-2000:]
        # a first count in counting mode goes the same way (issue 26)
        assert ("preserve_mostcc void @__cachefit_count_first_pm(" in ir) == pm, ir[-2000:]
        assert ("@__cachefit_count_first(" in ir) == plain, ir[-2000:]
        return bc, "pm" if pm else "plain"

    pic, pic_call = callee(["-fPIC"])
    pie, pie_call = callee(["-fPIE"])
    nopic, nopic_call = callee(["-fno-pic", "-mcmodel=small"])
    assert (pic_call, pie_call, nopic_call) == ("plain", "pm", "pm")
    assert len({pic, pie, nopic, callee([])[0]}) == 4     # one cached file per code model
    assert callee(["-fPIE", "-fPIC"])[1] == "plain"      # the last one wins, as in the unit
