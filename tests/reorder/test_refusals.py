"""Refusals: exit 2 with the reason and the location, and nothing written (bytes and mtime)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reorder_helpers import build_and_run, snapshot, write

REC = """\
#include <stddef.h>
#include <string.h>
struct obj {
    char c;
    int a;
    int b;
    long l;
};
"""

ORDER = "l,b,a,c"


def _use(body: str, headers: str = "") -> str:
    return f'#include <stdio.h>\n#include <unistd.h>\n{headers}#include "rec.h"\n{body}\n'


CASES = {
    "positional-init": (
        {"rec.h": REC, "use.c": _use("struct obj g = {1, 2, 3, 4};")},
        "aggregate initialisation by position", "use.c", 4),
    "fwrite": (
        {"rec.h": REC,
         "use.c": _use("void save(FILE *f, struct obj *o) { fwrite(o, sizeof *o, 1, f); }")},
        "passed to fwrite() as raw bytes", "use.c", 4),
    "fwrite-through-deref": (
        {"rec.h": REC,
         "use.c": _use("void save(FILE *f, struct obj **o) { fwrite(*o, sizeof **o, 1, f); }")},
        "passed to fwrite() as raw bytes", "use.c", 4),
    "write-socket": (
        {"rec.h": REC,
         "use.c": _use("void put(int fd, struct obj o) { write(fd, &o, sizeof o); }")},
        "passed to write() as raw bytes", "use.c", 4),
    "memcpy-to-buffer": (
        {"rec.h": REC,
         "use.c": _use("void ser(unsigned char *buf, const struct obj *o) {\n"
                       "    memcpy(buf, o, sizeof(struct obj)); }")},
        "copied to or from a byte buffer as a whole", "use.c", 5),
    "packed": (
        {"rec.h": REC.replace("struct obj {", "struct __attribute__((packed)) obj {")},
        "is packed", "rec.h", 3),
    "pragma-pack": (
        {"rec.h": "#pragma pack(push, 1)\n" + REC + "#pragma pack(pop)\n"},
        "is packed (#pragma pack", "rec.h", 4),
    "ifdef-in-members": (
        {"rec.h": REC.replace("    int b;\n", "#ifdef WITH_B\n    int b;\n#endif\n")},
        "preprocessor conditionals", "rec.h", 6),
    "positional-init-in-skipped-code": (
        {"rec.h": REC + "typedef struct obj obj_t;\n",
         "use.c": _use("#ifdef SMALL\nstatic const obj_t tab[2] = {\n    {1, 2, 3, 4}, {5}};\n"
                       "#else\nstatic const obj_t tab[1] = {{.c = 1, .l = 4}};\n#endif")},
        "obj is initialised by position in code the preprocessor skipped", "use.c", 5),
    "inline-asm-offset": (
        {"rec.h": REC,
         "use.c": _use('void f(struct obj *p) {\n'
                       '    __asm__ volatile("" :: "r"(p), "i"(offsetof(struct obj, b)));\n}')},
        "inline assembly takes the offset of obj.b", "use.c", 5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_and_untouched(tmp_path: Path, cachefit, case: str) -> None:
    files, message, where, line = CASES[case]
    write(tmp_path, files)
    paths = [tmp_path / n for n in files]
    before = snapshot(paths)
    code, out, err = cachefit("reorder", "obj", *paths, "--order",
                              "l,a,c" if case == "ifdef-in-members" else ORDER,
                              "--in-place", "--", "-std=gnu11")
    assert code == 2, err
    assert message in err
    assert f"{tmp_path / where}:{line}:" in err
    assert err.startswith("cachefit: error: ")
    assert snapshot(paths) == before
    assert not out


def test_designated_or_zero_lists_in_skipped_code_are_fine(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": REC, "use.c": _use(
        "#if 0\nstruct obj a = {.a = 1, .c = 2};\nstruct obj z = {0};\n"
        "struct obj e = {};\nstruct obj arr[2] = {[1] = {.b = 1}};\nint obj = {3};\n"
        "#endif\nstruct obj g = {.l = 5};")})
    code, _out, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "use.c",
                               "--order", ORDER, "--", "-std=gnu11")
    assert code == 0, err


def test_abi_list_in_project_file(tmp_path: Path, cachefit,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"rec.h": REC, "cachefit.toml": '[reorder]\nabi = ["obj"]\n'})
    monkeypatch.chdir(tmp_path)
    before = snapshot([tmp_path / "rec.h"])
    code, _, err = cachefit("reorder", "obj", "rec.h", "--order", ORDER, "--in-place")
    assert code == 2 and "listed as ABI" in err and "cachefit.toml" in err
    assert snapshot([tmp_path / "rec.h"]) == before
    # $CACHEFIT_CONFIG names another project file.
    other = tmp_path / "other.toml"
    other.write_text('[reorder]\nabi = ["unrelated"]\n')
    monkeypatch.setenv("CACHEFIT_CONFIG", str(other))
    code, _, err = cachefit("reorder", "obj", "rec.h", "--order", ORDER)
    assert code == 0, err


def test_assembly_hard_coded_offset(tmp_path: Path, cachefit) -> None:
    """A static_assert ties obj.b to a macro that an assembly file includes."""
    write(tmp_path, {
        "rec.h": REC,
        "ofs.h": "#define OBJ_B_OFS 8\n",
        "entry.S": '#include "ofs.h"\n    .text\n    movl OBJ_B_OFS(%rdi), %eax\n',
        "use.c": _use("_Static_assert(offsetof(struct obj, b) == OBJ_B_OFS, \"b\");",
                      '#include "ofs.h"\n'),
    })
    paths = [tmp_path / n for n in ("rec.h", "use.c", "entry.S")]
    before = snapshot(paths)
    code, _, err = cachefit("reorder", "obj", *paths, "--order", ORDER, "--in-place")
    assert code == 2
    assert "hard-coded in macro OBJ_B_OFS" in err and "--offsets-header" in err
    assert f"{tmp_path / 'use.c'}:5:" in err
    assert snapshot(paths) == before
    # Without the assembly file the assert is a pin: an order that moves b is refused...
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "use.c",
                            "--order", "c,b,a,l")
    assert code == 2 and "b would move from offset 8" in err
    assert f"{tmp_path / 'use.c'}:5:1: " in err and "a static_assert checks its offset" in err
    # ...and one that keeps b at 8 is fine.
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "use.c",
                            "--order", "a,c,b,l")
    assert code == 0, err


def test_fix_initializers_c(tmp_path: Path, cachefit) -> None:
    use = _use("struct obj g = {1, 2, 3, 4};\n"
               "struct obj h[2] = {{5, 6, 7, 8}, {.b = 9, 10}};\n"
               "int main(void) { printf(\"%d %d %d %ld %d %d %d %ld %d %ld\\n\", g.c, g.a, "
               "g.b, g.l, h[0].c, h[0].a, h[0].b, h[0].l, h[1].b, h[1].l); return 0; }")
    write(tmp_path, {"rec.h": REC, "use.c": use})
    before = build_and_run(tmp_path, "use.c", "gcc", "-std=c11")
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "use.c",
                              "--order", ORDER, "--fix-initializers", "--in-place",
                              "--", "-std=c11")
    assert code == 0, err
    text = (tmp_path / "use.c").read_text()
    assert "struct obj g = {.c = 1, .a = 2, .b = 3, .l = 4};" in text
    assert "{{.c = 5, .a = 6, .b = 7, .l = 8}, {.b = 9, .l = 10}}" in text
    assert "initialisers rewritten: 3" in out
    for cc in ("gcc", "clang-19"):
        if shutil.which(cc):
            assert build_and_run(tmp_path, "use.c", cc, "-std=c11") == before


CXX_REC = """\
#pragma once
struct agg { int a; long b; char c; };
"""
CXX_USE = """\
#include <cstdio>
#include "agg.hh"
static int n = 0;
agg make() { return {1, 2, 3}; }
agg g{.a = 4, .b = 5, .c = 6};
int main() {
    agg h = make();
    std::printf("%d %ld %d %d %ld %d %d\\n", h.a, h.b, h.c, g.a, g.b, g.c, n);
}
"""


def test_fix_initializers_cxx(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"agg.hh": CXX_REC, "use.cc": CXX_USE})
    files = [tmp_path / "agg.hh", tmp_path / "use.cc"]
    before_snap = snapshot(files)
    # Without --fix-initializers: refused (positional and designated lists both depend on
    # the order in C++).
    code, _, err = cachefit("reorder", "agg", *files, "--order", "c,b,a", "--in-place",
                            "--", "-std=c++20")
    assert code == 2 and "--fix-initializers" in err
    # Before C++20 designated initialisers do not exist: refused even with the flag.
    code, _, err = cachefit("reorder", "agg", *files, "--order", "c,b,a", "--in-place",
                            "--fix-initializers", "--", "-std=c++17")
    assert code == 2 and "C++20" in err
    assert snapshot(files) == before_snap
    before = build_and_run(tmp_path, "use.cc", "g++", "-std=c++20")
    code, _, err = cachefit("reorder", "agg", *files, "--order", "c,b,a", "--in-place",
                            "--fix-initializers", "--", "-std=c++20")
    assert code == 0, err
    text = (tmp_path / "use.cc").read_text()
    assert "return {.c = 3, .b = 2, .a = 1};" in text
    assert "agg g{.c = 6, .b = 5, .a = 4};" in text
    for cxx in ("g++", "clang++-19"):
        if shutil.which(cxx):
            assert build_and_run(tmp_path, "use.cc", cxx, "-std=c++20") == before


def test_cxx_initializer_with_side_effects_is_refused(tmp_path: Path, cachefit) -> None:
    use = CXX_USE.replace("return {1, 2, 3};", "return {++n, 2, 3};")
    write(tmp_path, {"agg.hh": CXX_REC, "use.cc": use})
    files = [tmp_path / "agg.hh", tmp_path / "use.cc"]
    before = snapshot(files)
    code, _, err = cachefit("reorder", "agg", *files, "--order", "c,b,a", "--in-place",
                            "--fix-initializers", "--", "-std=c++20")
    assert code == 2 and "side effects" in err and f"{tmp_path / 'use.cc'}:4:" in err
    assert snapshot(files) == before


def test_whole_record_copies_are_fine(tmp_path: Path, cachefit) -> None:
    use = _use("void cp(struct obj *d, const struct obj *s) { memcpy(d, s, sizeof *d); }\n"
               "struct obj z = {0};")
    write(tmp_path, {"rec.h": REC, "use.c": use})
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "use.c",
                            "--order", ORDER, "--", "-std=gnu11")
    assert code == 0, err
