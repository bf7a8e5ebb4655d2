"""Profiles of a leveldb-like C++ class carry the compiler's member sizes (issue 32).

tests/trace/programs/dbimpl*.cc: `DBImpl` derives from an interface with a vtable and holds
pointer, const-class and std members (see tests/frontend/test_dwarf_cxx_members.py). Built
through `cachefit c++` in profile mode with the project's own flags (`-O1 -g`, no
-fstandalone-debug) by clang++-19 and g++, traced from `DBImpl::Get`: every field of the
profile has the offset and size the program itself prints, none has size 0, the vtable
pointer is a field of its own, and the accesses of `Get` fall in `mem_`, `imm_` and `gets_`.
On leveldb the trace's DWARF walker gave pointer and const members size 0, and the layout
step then found that "the profile touches no field of leveldb::DBImpl".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from trace_helpers import CACHEFIT, HAVE_CLANG, HAVE_GCC, PROGRAMS, env_for, run, write_config

from cachefit.model.profile import load

SOURCES = ("dbimpl_opts.cc", "dbimpl.cc", "dbimpl_main.cc")
COMPILERS = [
    pytest.param("clang++-19", marks=pytest.mark.skipif(not HAVE_CLANG, reason="no clang-19")),
    pytest.param("g++", marks=pytest.mark.skipif(not HAVE_GCC, reason="no g++")),
]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_profile_fields_have_the_compilers_sizes(tmp_path: Path, compiler: str) -> None:
    for name in ("dbimpl.h", *SOURCES):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    write_config(tmp_path, ["DBImpl"], ["DBImpl::Get"])
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CXX=compiler)
    run([*CACHEFIT, "c++", "-O1", "-g", *SOURCES, "-o", "db", "-lpthread"], tmp_path, env)
    plain_env = env_for(tmp_path)
    printed = run([str(tmp_path / "db"), "layout"], tmp_path, plain_env).stdout.split("\n")
    members = {w[0]: (int(w[1]), int(w[2])) for w in (line.split() for line in printed[1:])
               if w}
    run([*CACHEFIT, "trace", "-o", "prof.json", "--", str(tmp_path / "db")], tmp_path,
        plain_env)
    t = load(tmp_path / "prof.json").types["DBImpl"]
    assert t.size == int(printed[0].split()[1])
    fields = {f.name: (f.offset, f.size) for f in t.fields}
    assert fields == {**members, "<vptr>": (0, 8)}
    assert all(size > 0 for _, size in fields.values())
    # Get reads mem_ and imm_, reads and writes gets_, ten times
    assert sum(s.count for s in t.sequences) == 10
    hit: set[tuple[str, str]] = set()
    for s in t.sequences:
        for a in s.accesses:
            names = [n for n, (o, z) in fields.items() if o <= a.offset < o + z]
            assert names, f"access at {a.offset} hits no field"
            hit.add((names[0], a.mode))
    assert {("mem_", "r"), ("imm_", "r"), ("gets_", "r"), ("gets_", "w")} <= hit
