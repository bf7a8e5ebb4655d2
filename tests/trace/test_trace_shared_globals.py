"""Objects of a traced type in static storage of a profile-built shared library.

The library (tests/trace/programs/shlib_lib.c) defines two global `struct obj` and a
static array of four. Linked normally (its constructor runs before the executable's runtime is
initialised) and loaded with dlopen (the executable exports the runtime's entry points),
its objects are registered with the library's load bias; after dlclose they are
forgotten: the same operation on fresh memory mapped at their addresses is not counted.
An executable that refers to a library's global directly may hold a copy of it (copy
relocation; gcc does) which the library's code then uses: the library's blob names the
GOT slot that finds it, and the executable's blob lists the copies it holds.
Both programs print the same as their plain builds. Built with clang-19 and gcc.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from trace_helpers import (
    CACHEFIT,
    HAVE_CLANG,
    HAVE_GCC,
    PROGRAMS,
    env_for,
    run,
    seqs,
    write_config,
)

from cachefit.model.profile import Profile, load
from cachefit.pipeline.runtime_exports import (
    EXPORTED_GLOBS,
    Linker,
    export_flags,
    parse_linker_version,
)
from cachefit.trace.elf_objects import SHLIB_BLOB_SYMBOL, find_blob

R, W = "r", "w"
SOURCES = ("shlib.h", "shlib_lib.c", "shlib_main.c", "shlib_dlopen.c", "obj.h")
COMPILERS = [
    pytest.param("clang-19", marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
    pytest.param("gcc", marks=pytest.mark.skipif(not HAVE_GCC, reason="no gcc")),
]
# op(x, y) reads y->a, then writes x->b; lib_op(i) reads lib_one.c, writes slot i's c.
OP_TWO = ((0, 0, 4, R), (1, 8, 8, W))
OP_ONE = ((0, 0, 4, R), (0, 8, 8, W))
LIB_OP = ((0, 16, 1, R), (1, 16, 1, W))


@dataclass
class Builds:
    compiler: str
    directory: Path
    plain: Path
    env: dict[str, str]


def _build(directory: Path, env: dict[str, str], link: tuple[str, ...] = ()) -> None:
    cc = [*CACHEFIT, "cc", "-O2", "-g"]
    run([*cc, "-fPIC", "-shared", "shlib_lib.c", "-o", "libshobj.so"], directory, env)
    run([*cc, "shlib_main.c", "-L.", "-lshobj", "-Wl,-rpath,$ORIGIN", "-o", "main", *link],
        directory, env)
    run([*cc, "shlib_dlopen.c", "-o", "dl", *link], directory, env)


@pytest.fixture(scope="module", params=COMPILERS)
def builds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Builds:
    """The three programs built in profile mode and, in `plain/`, in plain mode."""
    compiler: str = request.param
    tmp = tmp_path_factory.mktemp(f"shlib-{compiler}")
    for s in SOURCES:
        shutil.copy(PROGRAMS / s, tmp / s)
    write_config(tmp, ["obj"], ["op", "lib_op"])
    _build(tmp, env_for(tmp, CACHEFIT_MODE="profile", CACHEFIT_CC=compiler))
    plain = tmp / "plain"
    plain.mkdir()
    for s in SOURCES:
        shutil.copy(PROGRAMS / s, plain / s)
    _build(plain, env_for(tmp, CACHEFIT_MODE="plain", CACHEFIT_CC=compiler))
    return Builds(compiler, tmp, plain, env_for(tmp))


def _trace(b: Builds, output: str, *command: str) -> tuple[Profile, str]:
    proc = run([*CACHEFIT, "trace", "-o", output, "--", *command], b.directory, b.env)
    return load(b.directory / output), proc.stdout


def _plain_output(b: Builds, *command: str) -> str:
    return run(list(command), b.plain, b.env).stdout


def test_library_linked_normally(builds: Builds) -> None:
    prof, out = _trace(builds, "main.json", "./main")
    # A global with an array element (roles 0, 1); elements alone, and the other global
    # alone three times; the library's own entry function on its global and its array.
    assert seqs(prof, "obj") == {OP_TWO: 1, OP_ONE: 5, LIB_OP: 1}
    assert prof.invocations == 7
    assert prof.types["obj"].outside_objects == 0
    assert [f.name for f in prof.types["obj"].fields] == ["a", "pad", "b", "c"]
    assert out == _plain_output(builds, "./main")
    assert out.rstrip().endswith("same=1")


def test_library_loaded_with_dlopen_and_closed(builds: Builds) -> None:
    prof, out = _trace(builds, "dl.json", "./dl", "./libshobj.so")
    assert out == _plain_output(builds, "./dl", "./libshobj.so")
    if "recycled: yes" not in out:
        pytest.skip("the library's pages could not be mapped again after dlclose")
    # Three counted while loaded; the five on fresh memory at the same addresses after
    # dlclose are not (with the objects still registered, OP_TWO would count 8).
    assert seqs(prof, "obj") == {OP_TWO: 3, LIB_OP: 1}
    assert prof.invocations == 9


def test_library_blob_and_executable_exports(builds: Builds) -> None:
    lib = builds.directory / "libshobj.so"
    slot = find_blob(lib, SHLIB_BLOB_SYMBOL)
    assert slot is not None
    text = lib.read_bytes()[slot.file_offset:slot.file_offset + slot.capacity]
    lines = text.split(b"\0", 1)[0].decode().splitlines()
    globals_ = [ln.split() for ln in lines if ln.startswith("global ")]
    # lib_two, lib_one (its code reads its address from a GOT slot: `via`), the array.
    assert sorted((g[2], g[3], g[5], len(g)) for g in globals_) == \
        [("1", "24", "obj", 6), ("1", "24", "obj", 9), ("4", "24", "obj", 6)]
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    assert "__cachefit_shlib_blob" not in dyn and "__cachefit_blob" not in dyn
    exe = subprocess.run(["nm", "-D", "--defined-only", str(builds.directory / "dl")],
                         capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in exe.splitlines() if line.strip()}
    assert {"__cachefit_shlib_load", "__cachefit_shlib_unload", "__cachefit_enter",
            "__cachefit_lo"} <= names
    assert "op" not in names and "main" not in names   # not -rdynamic


def test_gold_gets_a_dynamic_list(builds: Builds, tmp_path: Path) -> None:
    # gold's --export-dynamic-symbol takes no globs: the dlopen program linked by gold.
    if shutil.which("ld.gold") is None:
        pytest.skip("ld.gold is not installed")
    for s in SOURCES:
        shutil.copy(PROGRAMS / s, tmp_path / s)
    write_config(tmp_path, ["obj"], ["op", "lib_op"])
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CC=builds.compiler)
    env["CACHEFIT_CACHE_DIR"] = builds.env["CACHEFIT_CACHE_DIR"]
    cc = [*CACHEFIT, "cc", "-O2", "-g"]
    run([*cc, "-fPIC", "-shared", "shlib_lib.c", "-o", "libshobj.so"], tmp_path, env)
    run([*cc, "shlib_dlopen.c", "-o", "dl", "-fuse-ld=gold"], tmp_path, env)
    run([*CACHEFIT, "trace", "-o", "dl.json", "--", "./dl", "./libshobj.so"], tmp_path,
        env_for(tmp_path))
    assert seqs(load(tmp_path / "dl.json"), "obj")[OP_TWO] == 3


def test_linker_versions_choose_the_export_option(tmp_path: Path) -> None:
    bfd = parse_linker_version("collect2 version 12.2.0\nGNU ld (GNU Binutils for Debian) 2.40\n")
    assert bfd == Linker("bfd", (2, 40)) and bfd.takes_export_globs
    old = parse_linker_version("GNU ld version 2.30-123.el8\n")
    assert old == Linker("bfd", (2, 30)) and not old.takes_export_globs
    gold = parse_linker_version("GNU gold (GNU Binutils for Debian 2.40) 1.16\n")
    assert gold.kind == "gold" and not gold.takes_export_globs
    lld = parse_linker_version("Debian LLD 19.1.4 (compatible with GNU linkers)\n")
    assert lld == Linker("lld", (19, 1)) and lld.takes_export_globs
    assert parse_linker_version("something else\n").kind == "unknown"
    assert export_flags(bfd, tmp_path) == [f"-Wl,--export-dynamic-symbol={g}"
                                           for g in EXPORTED_GLOBS]
    (flag,) = export_flags(gold, tmp_path)
    listed = Path(flag.split("=", 1)[1]).read_text()
    assert all(f"{g};" in listed for g in EXPORTED_GLOBS)


CXX_HEADER = """struct rec { int a; long b; };
namespace ns { extern rec g_rec; }
rec *slot(int i);
"""
CXX_LIB = """#include "rec.h"
namespace ns { rec g_rec; }   // only the executable uses it
static rec table[3];
rec *slot(int i) { return &table[i]; }
"""
CXX_MAIN = """#include <cstdio>
#include "rec.h"
__attribute__((noinline)) void op(rec *x, rec *y) { int v = y->a; x->b = v; }
int main() {
    op(&ns::g_rec, slot(1));   // ((0, 0, 4, r), (1, 8, 8, w))
    op(slot(2), slot(2));      // ((0, 0, 4, r), (0, 8, 8, w))
    op(&ns::g_rec, &ns::g_rec);
    std::printf("%ld %ld\\n", ns::g_rec.b, slot(2)->b);
}
"""


@pytest.mark.parametrize("compiler", [
    pytest.param("clang++-19", marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
    pytest.param("g++", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")),
])
def test_cxx_namespace_global_of_a_library(compiler: str, tmp_path: Path) -> None:
    # A namespaced global (found by its mangled name; g++ makes the executable hold a
    # copy of it) and a static array in a C++ library.
    for name, text in (("rec.h", CXX_HEADER), ("lib.cc", CXX_LIB), ("main.cc", CXX_MAIN)):
        (tmp_path / name).write_text(text)
    write_config(tmp_path, ["rec"], ["op"])
    outputs = []
    for mode in ("profile", "plain"):
        env = env_for(tmp_path, CACHEFIT_MODE=mode, CACHEFIT_CXX=compiler)
        cxx = [*CACHEFIT, "c++", "-O2", "-g"]
        run([*cxx, "-fPIC", "-shared", "lib.cc", "-o", f"librec-{mode}.so"], tmp_path, env)
        run([*cxx, "main.cc", f"librec-{mode}.so", "-Wl,-rpath,$ORIGIN", "-o", mode], tmp_path,
            env)
        if mode == "profile":
            proc = run([*CACHEFIT, "trace", "-o", "p.json", "--", "./profile"], tmp_path,
                       env_for(tmp_path))
            outputs.append(proc.stdout)
        else:
            outputs.append(run(["./plain"], tmp_path, env).stdout)
    assert seqs(load(tmp_path / "p.json"), "rec") == {OP_TWO: 1, OP_ONE: 2}
    assert outputs[0] == outputs[1]
