"""Runs of access checks through one base pointer coalesced by the LLVM pass plugin.

runtime/pass/cf_coalesce.cpp, loaded in step 2 of a profile build's compile
(cachefit.trace.sancov_inline, cachefit.trace.pass_plugin), replaces each run of >= 2
sanitizer-coverage calls through one base with constant offsets in a basic block by one
call of __cachefit_run(base, desc). (a) The pass on a small unit compiled by hand: exact
runs, descriptors and remaining calls per function. (b) Programs traced with and without
the plugin (CACHEFIT_COALESCE=0) give byte-identical profiles. (c) The plugin's lookup:
no llvm-config, another LLVM, no headers: no plugin and one note; the flag goes to step 2
only.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from trace_helpers import CACHEFIT, PROGRAMS, build, calls_in, run

from cachefit.cache_files import NOTICE_ENV, CacheWrites
from cachefit.frontend.compiler_args import parse_command
from cachefit.trace import pass_plugin
from cachefit.trace.sancov_inline import compile_commands
from compiled_helpers import private_cache

HAVE_LLVM = shutil.which("clang-19") is not None and shutil.which("llvm-config-19") is not None
needs_llvm = pytest.mark.skipif(not HAVE_LLVM, reason="clang-19 or llvm-config-19 (llvm-19-dev) "
                                "is not installed")
SANCOV = ["-fsanitize-coverage=func,trace-loads,trace-stores", "-fno-builtin-memset",
          "-fno-builtin-memcpy", "-fno-builtin-memmove"]
R, W = "r", "w"

Member = tuple[int, int, str]                       # offset, size, r/w
Desc = tuple[int, int, int, tuple[Member, ...]]     # n, lo, hi, members


@pytest.fixture(scope="module")
def plugin_so(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("plugin")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CACHEFIT_CACHE_DIR", str(private_cache(tmp)))
        found = pass_plugin.plugin(["clang-19"], os.environ)
    assert found.path is not None, found.note
    yield found.path


# ------------------------------------------------------------------ (a) the pass on IR

def _ir(tmp: Path, plugin: Path | None) -> str:
    """coalesce_runs.c through step 1 (instrumented, to bitcode) and step 2 (-O2, to IR,
    with the plugin when given; without the inline bitcode, so the calls stay calls)."""
    bc = tmp / "u.bc"
    opt = ["-O2", "-g", "-fno-slp-vectorize"]
    subprocess.run(["clang-19", *opt, *SANCOV, "-c", "-emit-llvm",
                    str(PROGRAMS / "coalesce_runs.c"), "-o", str(bc)], check=True)
    ll = tmp / ("with.ll" if plugin else "without.ll")
    subprocess.run(["clang-19", *opt, *([f"-fpass-plugin={plugin}"] if plugin else []),
                    "-x", "ir", str(bc), "-S", "-emit-llvm", "-o", str(ll)], check=True)
    return ll.read_text()


_DESC = re.compile(r"^@(__cachefit_run_desc[.\d]*) = private unnamed_addr constant "
                   r"\{ i32, i32, i32, i32, \[\d+ x i64\] \} "
                   r"\{ i32 (\d+), i32 (-?\d+), i32 (-?\d+), i32 0, \[\d+ x i64\] "
                   r"\[([^\]]*)\] \}, align 8$", re.M)
_CALL = re.compile(r"call void @(__cachefit_run|__sanitizer_cov_\w+)\(ptr [^,)]*%\w+"
                   r"(?:, ptr nonnull @(__cachefit_run_desc[.\d]*))?\)")


def _descs(ir: str) -> dict[str, Desc]:
    out: dict[str, Desc] = {}
    for name, n, lo, hi, words in _DESC.findall(ir):
        members = []
        for w in (int(x.split()[1]) & (2**64 - 1) for x in words.split(",")):
            off = w & 0xFFFFFFFF
            members.append((off - 2**32 if off >= 2**31 else off, (w >> 32) & 0x7FFFFFFF,
                            W if w >> 63 else R))
        out[name] = (int(n), int(lo), int(hi), tuple(members))
    return out


def _calls(ir: str) -> dict[str, list[str | Desc]]:
    """Per function, its check calls in order: a sancov callback's name, or a run's desc."""
    descs = _descs(ir)
    out: dict[str, list[str | Desc]] = {}
    for m in re.finditer(r"^define [^@]*@(\w+)\((.*?)^}", ir, re.M | re.S):
        out[m.group(1)] = [descs[d] if f == "__cachefit_run" else f.removeprefix(
            "__sanitizer_cov_") for f, d in _CALL.findall(m.group(2))]
    return out


@needs_llvm
def test_pass_replaces_runs_by_one_call_with_the_members_in_order(tmp_path: Path,
                                                                  plugin_so: Path) -> None:
    ir = _ir(tmp_path, plugin_so)
    calls = _calls(ir)
    assert calls["three"] == [(3, 0, 12, ((4, 4, R), (8, 4, R), (0, 4, W)))]
    assert calls["split_by_call"] == ["load4", (2, 4, 12, ((4, 4, W), (8, 4, W)))]
    assert calls["split_by_memcpy"] == [(2, 0, 8, ((0, 4, W), (4, 4, W))),
                                        (2, 8, 24, ((8, 4, W), (16, 8, W)))]
    assert calls["alternate"] == ["load4", "store4", "load8", "store8"]
    sixteen = tuple((4 * i, 4, R) for i in range(16))
    assert calls["eighteen"] == [(16, 0, 64, sixteen), (2, 64, 72, ((64, 4, R), (68, 4, R)))]
    # The runs' members are exactly the calls of the build without the plugin, in order.
    plain = _calls(_ir(tmp_path, None))
    for fn, seq in calls.items():
        expanded = [x for c in seq for x in (
            [f"{'store' if m == W else 'load'}{s}" for _, s, m in c[3]]
            if isinstance(c, tuple) else [c])]
        assert expanded == plain[fn], fn
    assert len(plain["eighteen"]) == 18


@needs_llvm
def test_run_call_has_the_first_members_debug_location(tmp_path: Path,
                                                       plugin_so: Path) -> None:
    ir = _ir(tmp_path, plugin_so)
    body = re.search(r"^define [^@]*@three\((.*?)^}", ir, re.M | re.S)
    assert body is not None
    dbg = re.search(r"call void @__cachefit_run\([^)]*\), !dbg (!\d+)", body.group(1))
    assert dbg is not None
    line = re.search(rf"^{dbg.group(1)} = !DILocation\(line: (\d+)", ir, re.M)
    src = (PROGRAMS / "coalesce_runs.c").read_text().splitlines()
    assert line is not None
    assert src[int(line.group(1)) - 1].strip() == "s->a = s->b + s->c;"


# ------------------------------------------------------------------ (c) finding LLVM

def _script(path: Path, text: str) -> None:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _fake_env(tmp: Path, llvm_config: str | None) -> dict[str, str]:
    """A compiler `clang-19` (says version 19.1.7) alone on PATH, with `llvm_config` as the
    text of an llvm-config script next to it."""
    bindir = tmp / "bin"
    bindir.mkdir()
    _script(bindir / "clang-19", "echo 19.1.7\n")
    if llvm_config is not None:
        _script(bindir / "llvm-config", llvm_config)
    return {"PATH": str(bindir), "CACHEFIT_CACHE_DIR": str(tmp / "cache")}


def test_no_llvm_config_gives_no_plugin_and_one_note_per_build(tmp_path: Path) -> None:
    env = _fake_env(tmp_path, None)
    notes: list[str] = []
    assert pass_plugin.plugin_args(["clang-19"], env, notes) == []
    assert notes == ["access checks are not coalesced (no llvm-config next to clang-19 and no "
                     "llvm-config-19 on PATH); the profile is the same, the traced program "
                     "slower (set CACHEFIT_COALESCE=0 to silence this)"]
    # Under cachefit build (NOTICE_ENV): the first compile says it, the others do not.
    env[NOTICE_ENV] = str(tmp_path / "cache-notice")
    build_notes: list[str] = []
    for _ in range(3):
        assert pass_plugin.plugin_args(["clang-19"], env, build_notes) == []
    assert build_notes == notes
    # Turned off: no plugin and nothing to say.
    off: list[str] = []
    assert pass_plugin.plugin_args(["clang-19"], {**env, "CACHEFIT_COALESCE": "0",
                                                  NOTICE_ENV: ""}, off) == []
    assert off == []


def test_llvm_config_of_another_version_or_without_headers_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    other = _fake_env(tmp_path / "a", "printf '14.0.6\\n/x/include\\n/x/bin\\n-I/x\\n'\n")
    found = pass_plugin.plugin(["clang-19"], other)
    assert found.path is None
    assert f"{tmp_path}/a/bin/llvm-config is LLVM 14.0.6, clang-19 is 19.1.7" in found.note
    (tmp_path / "b").mkdir()
    inc = tmp_path / "b" / "include"
    inc.mkdir()
    nodev = _fake_env(tmp_path / "b", f"printf '19.1.7\\n{inc}\\n/x/bin\\n-I{inc}\\n'\n")
    found = pass_plugin.plugin(["clang-19"], nodev)
    assert found.path is None
    assert f"{inc}/llvm/Passes/PassPlugin.h is missing (install llvm-19-dev)" in found.note


def test_a_compiler_older_than_llvm_19_gets_no_plugin(tmp_path: Path) -> None:
    env = _fake_env(tmp_path, "printf '14.0.6\\n/x/include\\n/x/bin\\n-I/x\\n'\n")
    _script(tmp_path / "bin" / "clang-19", "echo 14.0.6\n")
    found = pass_plugin.plugin(["clang-19"], env)
    assert found.path is None
    assert "(clang-19 is version 14.0.6, the plugin needs LLVM 19 or later)" in found.note


def test_a_failed_plugin_build_is_said_and_not_tried_per_unit(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    inc = tmp_path / "include"
    (inc / "llvm" / "Passes").mkdir(parents=True)
    (inc / "llvm" / "Passes" / "PassPlugin.h").write_text("")
    llvm_bin = tmp_path / "llvm-bin"
    llvm_bin.mkdir()
    _script(llvm_bin / "clang++", f"echo run >> {tmp_path}/tries\necho 'error: boom' >&2\n"
            "exit 1\n")
    env = _fake_env(tmp_path, f"printf '19.1.7\\n{inc}\\n{llvm_bin}\\n-I{inc}\\n'\n")
    monkeypatch.setenv("CACHEFIT_CACHE_DIR", env["CACHEFIT_CACHE_DIR"])
    notes = [pass_plugin.plugin(["clang-19"], env).note for _ in range(2)]
    assert notes[0] == notes[1]
    assert "(building cf_coalesce.cpp failed: error: boom; remove " in notes[0]
    assert (tmp_path / "tries").read_text() == "run\n"      # built once, not per unit


def test_an_unwritable_cache_is_said_once_as_the_cache_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inc = tmp_path / "include"
    (inc / "llvm" / "Passes").mkdir(parents=True)
    (inc / "llvm" / "Passes" / "PassPlugin.h").write_text("")
    env = _fake_env(tmp_path, f"printf '19.1.7\\n{inc}\\n/x/bin\\n-I{inc}\\n'\n")
    (tmp_path / "afile").write_text("not a directory\n")
    cache = tmp_path / "afile" / "cache"
    monkeypatch.setenv("CACHEFIT_CACHE_DIR", str(cache))
    warnings: list[str] = []
    writes = CacheWrites(cache, warnings, tmp_path, env={})
    for _ in range(2):
        assert pass_plugin.plugin_args(["clang-19"], env, warnings, writes) == []
    assert len(warnings) == 1
    assert warnings[0].startswith(f"the cache directory {cache} cannot be written (Not a "
                                  "directory")


@needs_llvm
def test_plugin_flag_is_in_step_2_only(tmp_path: Path, plugin_so: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CACHEFIT_CACHE_DIR", str(plugin_so.parent.parent))
    cmd = parse_command(["-O2", "-c", "u.c", "-o", "u.o"])
    unit = tmp_path / "u.i"
    unit.write_text("int x;\n")
    flag = f"-fpass-plugin={plugin_so}"
    env = dict(os.environ)
    first, second = compile_commands(["clang-19"], cmd, "c", unit, "u.o", env, SANCOV, tmp_path)
    assert flag not in first and second.count(flag) == 1
    off = compile_commands(["clang-19"], cmd, "c", unit, "u.o", {**env, "CACHEFIT_COALESCE": "0"},
                           SANCOV, tmp_path)
    assert len(off) == 2 and not any(a.startswith("-fpass-plugin") for a in off[1])


# ------------------------------------------------------------------ (b) same profiles

PROGRAM_CASES = [
    (["coalesce_prog.c"], ["obj"], ["fields", "across", "cut", "leaf"], ""),
    (["roles.c"], ["obj"], ["op", "outer"], ""),
    (["nested.c"], ["obj"], ["inner", "outer", "rec", "ping", "pong"], ""),
    (["nested_objects.c"], ["obj"], ["outer", "inner", "wide"], ""),
    (["long_ops.c"], ["obj"], ["scan", "poke", "driver", "many"],
     "max_accesses = 100\nmax_objects = 4\nmax_distinct = 3\n"),
    (["coalesce_types.c"], ["obj", "other"], ["mix"], ""),
]


# What differs between two traces of one program: the date and the seconds measured.
_VOLATILE = re.compile(rb'("date": "[^"]*"|"(?:command|traced)_seconds": [0-9.e-]+)')


def _masked(profile: Path) -> bytes:
    return _VOLATILE.sub(b"<volatile>", profile.read_bytes())


@needs_llvm
@pytest.mark.parametrize(("sources", "types", "entry", "extra"), PROGRAM_CASES,
                         ids=[c[0][0] for c in PROGRAM_CASES])
def test_profile_is_byte_identical_with_and_without_the_plugin(
        tmp_path: Path, sources: list[str], types: list[str], entry: list[str],
        extra: str) -> None:
    # One program path for both builds: the profile names the command it traced.
    b = build(tmp_path, sources, types=types, entry=entry, flags=("-O2", "-g"),
              config_extra=extra)
    assert "not coalesced" not in b.compile_stderr
    out_with = b.run()
    with_calls = calls_in(b.program, entry[0])
    b.trace(output="with.json")
    env = dict(b.env, CACHEFIT_MODE="profile", CACHEFIT_CC="clang-19", CACHEFIT_COALESCE="0")
    run([*CACHEFIT, "cc", "-O2", "-g", *sources, "-o", "prog", "-lpthread"], tmp_path, env)
    without_calls = calls_in(b.program, entry[0])
    b.trace(output="without.json")
    assert b.run() == out_with
    assert _masked(tmp_path / "with.json") == _masked(tmp_path / "without.json")
    assert b"<volatile>" in _masked(tmp_path / "with.json")
    if sources == ["coalesce_prog.c"]:      # fields(): one run of 4 (c r, b r, a w, b w)
        assert "__cachefit_run" in with_calls and "__cachefit_run" not in without_calls
