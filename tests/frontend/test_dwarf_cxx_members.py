"""C++ members read from DWARF the way leveldb's `DBImpl` needs (issue 32).

tests/trace/programs/dbimpl*.cc is a leveldb-like class: an interface base with a vtable,
pointer members (clang gives its pointer types no DW_AT_byte_size), a const member whose
class is defined, with its constructor, in another unit (clang's constructor homing), and
`std::mutex`/`std::condition_variable`/`std::string` members. The program prints each
member's offset and size as the compiler laid them out; the DWARF reading must match them,
for clang-19 and gcc, DWARF 4 and 5, with and without -fstandalone-debug, with DWARF 4 type
units (-fdebug-types-section; DWARF 5 ones are refused by name), and the object of the type in
static storage is found in each. Where the DWARF
defines a member's class nowhere (clang without -fstandalone-debug: `std::condition_variable`
lives in libstdc++), the front end refuses with the member's name, and the trace's link step
(`elf_objects.analyze`) gives the type no layout and says why, instead of sizes 0 (the
trace's own DWARF walker read every pointer and declared-only member as size 0).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_records import IncompleteRecord, read_record
from cachefit.trace.elf_objects import analyze

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
SOURCES = ("dbimpl_opts.cc", "dbimpl.cc", "dbimpl_main.cc")
CLANG = shutil.which("clang++-19")
GCC = shutil.which("g++")

# (compiler, flags, what the DWARF gives: "whole" when it defines every member's class
# somewhere, else the words of the refusal)
BUILDS = [
    ("clang++-19", ("-g",), "member bg_cv_ std::condition_variable"),
    ("clang++-19", ("-g", "-fstandalone-debug"), "whole"),
    ("clang++-19", ("-gdwarf-4", "-fstandalone-debug"), "whole"),
    ("clang++-19", ("-gdwarf-5", "-fno-standalone-debug"), "member bg_cv_ std::condition_variable"),
    ("clang++-19", ("-gdwarf-4", "-fdebug-types-section", "-fstandalone-debug"), "whole"),
    ("clang++-19", ("-gdwarf-5", "-fdebug-types-section", "-fstandalone-debug"),
     "in a type unit it cannot read"),
    ("g++", ("-g",), "whole"),
    ("g++", ("-gdwarf-4",), "whole"),
    ("g++", ("-gdwarf-5", "-femit-class-debug-always"), "whole"),
    ("g++", ("-gdwarf-4", "-fdebug-types-section"), "whole"),
]


def _param(compiler: str, flags: tuple[str, ...], expect: str) -> object:
    missing = (CLANG if compiler.startswith("clang") else GCC) is None
    return pytest.param(compiler, flags, expect, id=f"{compiler}{''.join(flags)}",
                        marks=pytest.mark.skipif(missing, reason=f"no {compiler}"))


def _build(tmp: Path, compiler: str, flags: tuple[str, ...]) -> tuple[Path, dict[str, tuple[
        int, int]], int]:
    """The program, and the compiler's {member: (offset, size)} and sizeof(DBImpl)."""
    for name in ("dbimpl.h", *SOURCES):
        shutil.copy(PROGRAMS / name, tmp / name)
    prog = tmp / "db"
    subprocess.run([compiler, "-O1", *flags, *SOURCES, "-o", str(prog)], cwd=tmp, check=True)
    out = subprocess.run([str(prog), "layout"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    size = int(out[0].split()[1])
    members = {w[0]: (int(w[1]), int(w[2])) for w in (line.split() for line in out[1:]) if w}
    return prog, members, size


@pytest.mark.parametrize(("compiler", "flags", "expect"), [_param(*b) for b in BUILDS])
def test_members_read_as_the_compiler_laid_them_out(tmp_path: Path, compiler: str,
                                                    flags: tuple[str, ...], expect: str) -> None:
    prog, members, size = _build(tmp_path, compiler, flags)
    facts = analyze(prog, ("DBImpl",))
    # the global of the type is found whatever the DWARF says of its layout (but in a
    # DWARF 5 type unit, which is not read)
    if "type unit" not in expect:
        assert [(o.variable, o.count, o.elem) for o in facts.objects] == [("g_spare", 1, size)]
    if expect != "whole":
        with pytest.raises(IncompleteRecord, match=expect):
            read_record(str(prog), "DBImpl")
        assert "DBImpl" not in facts.layouts      # no layout rather than guessed sizes
        assert expect in facts.problems["DBImpl"]
        return
    rec = read_record(str(prog), "DBImpl")
    assert rec.size == size
    assert {f.name: (f.offset, f.size) for f in rec.fields} == members
    assert rec.vptr_offset == 0
    assert facts.problems == {}
    layout = facts.layouts["DBImpl"]
    assert layout.size == size
    spans = {f.name: (f.offset, f.size) for f in layout.fields}
    assert spans == {**members, "<vptr>": (0, 8)}
