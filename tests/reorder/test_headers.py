"""--offsets-header and --assert-header carry the compiler's new layout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reorder_helpers import build_and_run, write

REC = """\
struct obj {
    char c;
    long l;
    int i;
    unsigned bits : 3;
};
"""
MAIN = """\
#include <stdio.h>
#include <stddef.h>
#include "rec.h"
#include "asserts.h"
#include "offsets.h"
int main(void) {
    printf("%zu %zu %zu %zu\\n", offsetof(struct obj, c), offsetof(struct obj, l),
           offsetof(struct obj, i), sizeof(struct obj));
    printf("%d %d %d %d\\n", OBJ_C_OFFSET, OBJ_L_OFFSET, OBJ_I_OFFSET, OBJ_SIZE);
    return 0;
}
"""


def test_headers_match_the_compiler(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": REC, "main.c": MAIN})
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", "--order", "l,bits,i,c",
                              "--in-place", "--offsets-header", tmp_path / "offsets.h",
                              "--assert-header", tmp_path / "asserts.h", "--", "-std=c11")
    assert code == 0, err
    offsets = (tmp_path / "offsets.h").read_text()
    assert "#define OBJ_L_OFFSET 0\n" in offsets and "#define OBJ_SIZE 24\n" in offsets
    assert "bits: bit-field" in offsets
    asserts = (tmp_path / "asserts.h").read_text()
    assert '_Static_assert(offsetof(struct obj, i) == 12, "cachefit: offset of obj::i");' \
        in asserts
    lines = build_and_run(tmp_path, "main.c", "gcc", "-std=c11").splitlines()
    assert lines[0] == lines[1] == "16 0 12 24"
    # The asserts stop a build whose layout differs from the one generated.
    (tmp_path / "rec.h").write_text(REC)
    proc = subprocess.run(["gcc", "-std=c11", "-fsyntax-only", str(tmp_path / "main.c")],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "cachefit: offset of obj::" in proc.stderr


CXX_REC = """\
#pragma once
class tcb {
public:
    void check();
    long visible;
private:
    char state;
    long sp;
};
"""


def test_cxx_private_members_go_into_a_macro(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"tcb.hh": CXX_REC,
                     "use.cc": '#include "tcb.hh"\n#include "asserts.hh"\n'
                               "void tcb::check() { CACHEFIT_ASSERT_TCB_LAYOUT() }\n"
                               "int main() { tcb t; t.check(); }\n"})
    code, _, err = cachefit("reorder", "tcb", tmp_path / "tcb.hh", "--order",
                            "sp,visible,state", "--in-place", "--assert-header",
                            tmp_path / "asserts.hh", "--", "-std=c++17")
    assert code == 0, err
    text = (tmp_path / "asserts.hh").read_text()
    assert "static_assert(offsetof(tcb, visible) == 8" in text
    assert "#define CACHEFIT_ASSERT_TCB_LAYOUT()" in text
    assert "offsetof(tcb, sp) == 0" in text.split("#define CACHEFIT_ASSERT_TCB_LAYOUT()")[1]
    for cxx in ("g++", "clang++-19"):
        subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-Wno-unused-private-field",
                        "-fsyntax-only",
                        str(tmp_path / "use.cc")], check=True, capture_output=True)
