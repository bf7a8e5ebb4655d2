"""cachefit.toml parsing, mode/compiler selection, and driver command-line classification."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.frontend.compiler_args import dependency_options, parse_command, select
from cachefit.model.project_config import (
    effective_mode,
    find_config,
    load_config,
    parse_config,
    real_compiler,
)
from cachefit.pipeline.compiler_wrapper import allowlist_text


def test_minimal_config() -> None:
    cfg = parse_config('[trace]\ntypes = ["obj"]\nentry = ["op"]\n', Path("cachefit.toml"))
    assert cfg.trace.types == ("obj",) and cfg.trace.entry == ("op",)
    assert cfg.trace.instrument is None and cfg.trace.max_accesses == 4096
    assert effective_mode(cfg, {}) == "plain"
    assert real_compiler(cfg, "c", {}) == ["cc"]


def test_full_config_and_other_sections_kept() -> None:
    text = """
[build]
mode = "profile"
cc = "ccache clang-19"
cxx = "clang++-19"
[trace]
types = ["tcb"]
entry = ["ipc"]
instrument = ["ipc", "switch_to"]
instrument_files = ["*/pingpong.cc"]
max_accesses = 100
max_objects = 4
allocators = ["xmalloc"]
deallocators = ["xfree"]
backend = "tsan"
[reorder]
abi = ["wire"]
"""
    cfg = parse_config(text, Path("x.toml"))
    assert cfg.trace.instrument == ("ipc", "switch_to")
    assert cfg.trace.backend == "tsan" and cfg.trace.max_objects == 4
    assert effective_mode(cfg, {}) == "profile"
    assert effective_mode(cfg, {"CACHEFIT_MODE": "plain"}) == "plain"
    assert real_compiler(cfg, "c", {}) == ["ccache", "clang-19"]
    assert real_compiler(cfg, "c++", {"CACHEFIT_CXX": "g++"}) == ["g++"]
    assert cfg.sections["reorder"] == {"abi": ["wire"]}


@pytest.mark.parametrize("text, message", [
    ('[trace]\ntypo = 1\n', "unknown key"),
    ('[trace]\ntypes = "obj"\nentry = [1]\n', "list of names"),
    ('[trace]\nmax_accesses = 0\n', "max_accesses"),
    ('[build]\nmode = "fast"\n', "mode"),
    ('[trace\n', "invalid TOML"),
])
def test_bad_configs(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_config(text, Path("cachefit.toml"))


def test_bad_mode_env() -> None:
    cfg = parse_config("", Path("c.toml"))
    with pytest.raises(UserError, match="not a mode"):
        effective_mode(cfg, {"CACHEFIT_MODE": "turbo"})


def test_config_discovery(tmp_path: Path) -> None:
    (tmp_path / "cachefit.toml").write_text('[trace]\ntypes = ["a"]\n')
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    assert find_config({}, sub) == tmp_path / "cachefit.toml"
    other = tmp_path / "other.toml"
    other.write_text('[trace]\ntypes = ["b"]\n')
    assert load_config({"CACHEFIT_CONFIG": str(other)}, sub).trace.types == ("b",)
    with pytest.raises(UserError, match="CACHEFIT_CONFIG"):
        find_config({"CACHEFIT_CONFIG": str(tmp_path / "missing.toml")}, sub)


def test_parse_compile_and_link_commands() -> None:
    c = parse_command(["-O2", "-g", "-Iinc", "-D", "X=1", "-c", "a.c", "-o", "obj/a.o", "-MD",
                       "-MT", "obj/a.o", "-Wl,-O1", "-lm"])
    assert c.action == "compile" and c.output == "obj/a.o"
    assert [s.path for s in c.sources] == ["a.c"] and c.sources[0].lang == "c"
    assert select(c, keep={"other"}) == ["-O2", "-g"]
    assert select(c, keep={"pp"}) == ["-Iinc", "-D", "X=1"]
    assert select(c, keep={"link"}) == ["-Wl,-O1", "-lm"]
    assert dependency_options(c) == ["-MD", "-MT", "obj/a.o"]
    link = parse_command(["a.o", "b.cc", "-o", "prog", "-L", "lib", "-lfoo"])
    assert link.action == "link" and [s.lang for s in link.sources] == ["c++"]
    assert parse_command(["-x", "c++", "a.c", "-c"]).sources[0].lang == "c++"
    assert parse_command(["--version"]).action == "query"
    assert parse_command(["-E", "a.c"]).action == "preprocess"
    assert parse_command(["-S", "a.c"]).action == "assemble"
    assert parse_command(["-shared", "a.o", "-o", "x.so"]).shared


def test_response_files(tmp_path: Path) -> None:
    rsp = tmp_path / "args.rsp"
    rsp.write_text('-c "my file.c" -o out.o')
    c = parse_command([f"@{rsp}"])
    assert c.action == "compile" and c.sources[0].path == "my file.c" and c.output == "out.o"


def test_allowlist_has_src_and_mangled_fun_entries() -> None:
    text = allowlist_text(["ipc", "ns::run"], ["*"])
    lines = text.splitlines()
    assert "src:*" in lines and "fun:ipc" in lines and "fun:_Z3ipc*" in lines
    assert "fun:_ZN*3run*" in lines


def test_backend_subtables_in_trace_are_allowed() -> None:
    text = '[trace]\ntypes = ["tcb_t"]\nentry = "op"\ncache_line = 32\n[trace.qemu]\nkernel = "k"\n'
    cfg = parse_config(text, Path("c.toml"))
    assert cfg.trace.entry == ("op",) and cfg.trace.cache_line == 32
    assert cfg.raw["trace"]["qemu"] == {"kernel": "k"}


def test_max_objects_beyond_the_runtime_is_refused(tmp_path: Path) -> None:
    """`cachefit trace --max-objects 65536` (issue 26): the runtime accepts 1..32767, so a
    larger value is a one-line error (exit 2), not silently the default 64."""
    import subprocess
    import sys
    cli = str(Path(sys.executable).with_name("cachefit"))
    proc = subprocess.run([cli, "trace", "--max-objects", "65536",
                           "-o", str(tmp_path / "p.json"), "--", "true"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("cachefit: error: --max-objects 65536")
    assert len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(UserError, match="max_objects"):
        parse_config("[trace]\nmax_objects = 32768\n", Path("cachefit.toml"))
