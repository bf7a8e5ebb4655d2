"""The commands as users type them: cachefit cc/c++, cachefit trace, cachefit profile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    PROGRAMS,
    REPO,
    env_for,
    needs_clang,
    profile_project,
    run,
    seqs,
    write_config,
)

from cachefit.model.profile import load

BIN = Path(sys.executable).parent


@needs_clang
def test_minimal_use_exactly_as_documented(tmp_path: Path) -> None:
    shutil.copy(PROGRAMS / "roles.c", tmp_path / "prog.c")
    shutil.copy(PROGRAMS / "obj.h", tmp_path / "obj.h")
    env = env_for(tmp_path)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    script = (
        "set -e\n"
        "printf '[trace]\\ntypes = [\"obj\"]\\nentry = [\"op\"]\\n' > cachefit.toml\n"
        "CACHEFIT_MODE=profile CACHEFIT_CC=clang-19 cachefit cc -O2 -g prog.c -o prog\n"
        "cachefit trace -o prof.json -- ./prog\n")
    proc = subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    prof = load(tmp_path / "prof.json")
    # -O2: op() is still a call (noinline); outer() is not an entry here, so the op() it
    # calls is an invocation of its own.
    assert prof.invocations == 8
    assert sum(seqs(prof, "obj").values()) == 8
    assert "wrote prof.json: 8 invocations" in proc.stderr
    show = run([*CACHEFIT, "profile", "show", "prof.json"], tmp_path, env).stdout
    assert "type obj: 24 bytes" in show and " b " in show


@needs_clang
def test_plain_mode_passes_through(tmp_path: Path) -> None:
    shutil.copy(PROGRAMS / "macros.c", tmp_path / "m.c")
    shutil.copy(PROGRAMS / "obj.h", tmp_path / "obj.h")
    env = env_for(tmp_path, CACHEFIT_CC="clang-19", CACHEFIT_TRACE_DIR=str(tmp_path))
    run([*CACHEFIT, "cc", "-O1", f"-I{REPO / 'runtime' / 'include'}", "m.c", "-o", "m"],
        tmp_path, env)
    syms = subprocess.run(["nm", str(tmp_path / "m")], capture_output=True, text=True).stdout
    assert "__cachefit" not in syms and "sanitizer_cov" not in syms
    run([str(tmp_path / "m")], tmp_path, env)
    assert not list(tmp_path.glob("cachefit-*.raw"))


def test_profile_mode_needs_a_project_file(tmp_path: Path) -> None:
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CC="cc")
    proc = subprocess.run([*CACHEFIT, "cc", "-c", "x.c"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "profile mode needs a project file" in proc.stderr


@needs_clang
def test_separate_compile_and_link_with_dependency_files(tmp_path: Path) -> None:
    env = profile_project(tmp_path, ["multi_main.c", "multi_lib.c"], types=["obj"],
                          entry=["op"])
    (tmp_path / "obj").mkdir()
    run([*CACHEFIT, "cc", "-O1", "-g", "-MMD", "-c", "multi_main.c", "-o", "obj/main.o"],
        tmp_path, env)
    run([*CACHEFIT, "cc", "-O1", "-g", "-c", "multi_lib.c", "-o", "obj/lib.o"], tmp_path, env)
    run([*CACHEFIT, "cc", "obj/main.o", "obj/lib.o", "-o", "prog"], tmp_path, env)
    deps = (tmp_path / "obj" / "main.d").read_text()
    assert deps.startswith("obj/main.o:") and "obj.h" in deps
    prof_env = env_for(tmp_path)
    run([*CACHEFIT, "trace", "-o", "p.json.gz", "--keep-raw", "raw", "--", "./prog"], tmp_path,
        prof_env)
    prof = load(tmp_path / "p.json.gz")
    assert seqs(prof, "obj") == {((0, 0, 4, "r"), (0, 0, 4, "w")): 3}
    # The kept raw trace converts to the same profile; merging doubles the counts.
    run([*CACHEFIT, "profile", "import", "raw", "-o", "again.json"], tmp_path, prof_env)
    assert seqs(load(tmp_path / "again.json"), "obj") == seqs(prof, "obj")
    run([*CACHEFIT, "profile", "merge", "p.json.gz", "again.json", "-o", "m.json"], tmp_path,
        prof_env)
    merged = load(tmp_path / "m.json")
    assert merged.invocations == 6
    assert seqs(merged, "obj") == {((0, 0, 4, "r"), (0, 0, 4, "w")): 6}


def test_trace_without_profile_build_is_an_error(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    proc = subprocess.run([*CACHEFIT, "trace", "-o", "p.json", "--", "true"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "wrote no trace" in proc.stderr
    assert not (tmp_path / "p.json").exists()


@needs_clang
def test_traced_command_status_is_returned(tmp_path: Path) -> None:
    shutil.copy(PROGRAMS / "forks.c", tmp_path / "f.c")
    shutil.copy(PROGRAMS / "obj.h", tmp_path / "obj.h")
    write_config(tmp_path, ["obj"], ["op"])
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19")
    run([*CACHEFIT, "cc", "-g", "f.c", "-o", "f"], tmp_path, env)
    script = tmp_path / "twice.sh"
    script.write_text("#!/bin/sh\n./f\n./f\nexit 3\n")
    script.chmod(0o755)
    proc = subprocess.run([*CACHEFIT, "trace", "-o", "p.json", "--", "./twice.sh"],
                          cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True)
    assert proc.returncode == 3 and "exited with status 3" in proc.stderr
    prof = load(tmp_path / "p.json")
    assert prof.invocations == 12 and prof.metadata["processes"] == 4


def test_runtime_builds_warning_free_with_gcc_and_clang(tmp_path: Path) -> None:
    if shutil.which("clang-19") is None or shutil.which("gcc") is None:
        pytest.skip("needs gcc and clang-19")
    for cc in ("gcc", "clang-19"):
        build = tmp_path / cc
        proc = subprocess.run(["make", "-C", str(REPO / "runtime"), f"CC={cc}",
                               f"BUILD={build}", "CFLAGS=-Werror"], capture_output=True,
                              text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert (build / "libcachefit_rt.a").is_file()
        assert "warning" not in proc.stderr
