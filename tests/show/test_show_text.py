"""`cachefit show` text output and the compile_commands.json path, against clang's layout."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from cachefit.cli.main import main

SRC = textwrap.dedent("""\
    #include <stdint.h>
    struct hot {
        char flag;          /* 7-byte hole follows */
        uint64_t key;
        char pad[60];       /* crosses the first cache line */
        uint32_t tail;
    };
    namespace kern {
    struct B { virtual ~B() {} int x; };
    struct V { int v; };
    struct D : B, virtual V { char c; };
    }
    """)


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    p = tmp_path / "hot.cpp"
    p.write_text(SRC)
    return p


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_shows_hole_boundary_and_totals(src: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "hot", str(src), "--", "-std=c++17")
    assert code == 0
    assert "XXX 7 bytes hole" in out
    assert "cacheline 1 boundary (64 bytes)" in out
    assert "/* size: 80, cachelines: 2, members: 4 */" in out
    # The boundary marker comes before the member that starts past it.
    assert out.index("cacheline 1 boundary") < out.index("tail;")


def test_totals_add_up_with_bit_fields_and_anonymous_members(tmp_path: Path, capsys) -> None:
    # issue 29, case 13: "sum members: 45, holes: 3, sum holes: 8, padding: 4" for 48
    # bytes (bit-field storage units overlapping `tag` and `name`, both union members)
    p = tmp_path / "bf.c"
    p.write_text("struct r { char tag; unsigned a : 3; unsigned b : 7; long x;\n"
                 "  union { int i; double d; }; struct { short p; char q; };\n"
                 "  unsigned c : 1; char name[9]; int last; };\n"
                 "union u { char c[5]; short s; };\n")
    code, out, _ = run(capsys, "show", "r", str(p))
    assert code == 0
    assert "/* size: 48, cachelines: 1, members: 11 */" in out
    assert "/* sum members: 36, holes: 3, sum holes: 8 */" in out    # 36 + 8 + 4 = 48
    assert "/* padding: 4 */" in out
    code, out, _ = run(capsys, "show", "u", str(p))
    assert code == 0
    assert "/* size: 6, cachelines: 1, members: 2 */" in out
    assert "/* sum members: 5, holes: 0, sum holes: 0 */" in out and "/* padding: 1 */" in out


def test_cache_line_option_changes_markers(src: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "hot", str(src), "--cache-line", "32", "--", "-std=c++17")
    assert code == 0
    assert "cacheline 2 boundary (64 bytes)" in out
    assert "cachelines: 3" in out


def test_bad_cache_line_is_user_error(src: Path, capsys) -> None:
    code, _, err = run(capsys, "show", "hot", str(src), "--cache-line", "48")
    assert code == 2 and "power of two" in err


def test_bases_and_vptr_come_from_compiler(src: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "D", str(src), "--json", "--", "-std=c++17")
    assert code == 0
    rec = json.loads(out)
    assert rec["name"] == "kern::D" and rec["vptr_offset"] == 0
    bases = {b["name"]: b for b in rec["bases"]}
    assert bases["kern::B"]["offset"] == 0 and not bases["kern::B"]["virtual"]
    assert bases["kern::V"]["virtual"]
    # Check against g++'s own answer.
    probe = src.parent / "probe.cpp"
    probe.write_text(f'#include "{src}"\n#include <cstdio>\nint main(){{ kern::D d; '
                     'std::printf("%zu %td %td\\n", sizeof d, '
                     '(char*)static_cast<kern::V*>(&d) - (char*)&d, (char*)&d.c - (char*)&d); }')
    exe = src.parent / "probe"
    subprocess.run(["g++", "-std=c++17", "-w", str(probe), "-o", str(exe)], check=True)
    size, voff, coff = map(int, subprocess.run([str(exe)], capture_output=True, text=True,
                                               check=True).stdout.split())
    assert rec["size"] == size and bases["kern::V"]["offset"] == voff
    assert {f["name"]: f["offset"] for f in rec["fields"]}["c"] == coff


def test_compile_commands(tmp_path: Path, src: Path, capsys) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "cfg.h").write_text("#define NREGS 12\n")
    unit = tmp_path / "unit.c"
    unit.write_text('#include "cfg.h"\nstruct regs { long r[NREGS]; int n; };\n')
    build = tmp_path / "build"
    build.mkdir()
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": "unit.c",
        "arguments": ["cc", "-Iinc", "-c", "unit.c", "-o", "build/unit.o", "-MD",
                      "-MF", "build/unit.d"]}]))
    cwd = os.getcwd()
    os.chdir(build)  # relative include paths are resolved against the entry's directory
    try:
        code, out, err = run(capsys, "show", "regs", "-p", str(build), "--json")
    finally:
        os.chdir(cwd)
    assert code == 0, err
    rec = json.loads(out)
    assert rec["size"] == 12 * 8 + 8
    assert rec["fields"][1] == {"name": "n", "type": "int", "offset": 96, "size": 4,
                                "align": 4, "bit_offset": None, "bit_size": None,
                                "access": "public"}


def test_missing_compile_commands_is_user_error(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "show", "x", "-p", str(tmp_path))
    assert code == 2 and "compile_commands.json" in err


def test_no_source_is_user_error(capsys) -> None:
    code, _, err = run(capsys, "show", "x")
    assert code == 2 and "no source given" in err
