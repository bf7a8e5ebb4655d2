"""A record that units see defined in different files (a build-time copy of a header) is
refused: rewriting one copy would leave the units disagreeing on its layout. The same
header reached through another path or a symbolic link, and records of the same name that
each `.c` file (or anonymous namespace) defines for itself, are reordered as before."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import snapshot, write

REC_H = """\
#ifndef REC_H
#define REC_H
typedef struct rec {
    int type;
    long refcount;
} rec;
rec *rec_new(int type);
#endif
"""
LIB = """\
#include "rec.h"
#include <stdlib.h>
rec *rec_new(int type) {
    rec *r = malloc(sizeof *r);
    r->type = type;
    r->refcount = 1;
    return r;
}
"""
MAIN = """\
#include <REC>
#include <stdio.h>
int main(void) {
    rec *r = rec_new(7);
    printf("type=%d refcount=%ld\\n", r->type, r->refcount);
    return !(r->type == 7 && r->refcount == 1);
}
"""


def _project(root: Path, main_include: str, units: list[str]) -> None:
    for d in ("src", "include", "test"):
        (root / d).mkdir(exist_ok=True)
    write(root, {"src/rec.h": REC_H, "src/lib.c": LIB,
                 "test/main.c": MAIN.replace("<REC>", main_include)})
    db = [{"directory": str(root), "file": str(root / u),
           "arguments": ["gcc", "-Iinclude", "-c", u]} for u in units]
    (root / "compile_commands.json").write_text(json.dumps(db))


def _run(root: Path, *units: str) -> str:
    exe = root / "prog"
    subprocess.run(["gcc", "-Iinclude", *units, "-o", str(exe)], cwd=root, check=True,
                   capture_output=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def _two_units(root: Path, compiler: str, std: str, *units: str) -> str:
    """Build `units` with warnings as errors and return what the program prints."""
    exe = root / "prog"
    subprocess.run([compiler, std, "-Wall", "-Werror", *(str(root / u) for u in units),
                    "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("first", ["src/lib.c", "test/main.c"])
def test_a_copied_header_is_refused(tmp_path: Path, cachefit, monkeypatch,
                                    first: str) -> None:
    """jansson: the build copies src/jansson.h to include/; the tests include the copy."""
    units = sorted(["src/lib.c", "test/main.c"], key=lambda u: u != first)
    _project(tmp_path, "<rec.h>", units)
    (tmp_path / "include" / "rec.h").write_text(REC_H)
    monkeypatch.chdir(tmp_path)
    files = [tmp_path / p for p in ("src/rec.h", "include/rec.h", "src/lib.c", "test/main.c")]
    before = snapshot(files)
    code, out, err = cachefit("reorder", "rec", "--order", "refcount,type", "-p", tmp_path,
                              "--in-place")
    assert code == 2, err
    assert not out and len(err.strip().splitlines()) == 1
    assert err.startswith("cachefit: error: ")
    assert "rec is defined in two files" in err
    assert "src/rec.h:3" in err and "include/rec.h:3" in err
    assert "make one include the other, or reorder the copy too" in err
    assert snapshot(files) == before
    assert _run(tmp_path, "src/lib.c", "test/main.c") == "type=7 refcount=1\n"


@pytest.mark.parametrize("how", ["relative-path", "symlinked-dir"])
def test_the_same_header_by_another_path_is_reordered(tmp_path: Path, cachefit, monkeypatch,
                                                      how: str) -> None:
    if how == "relative-path":
        _project(tmp_path, '"../src/rec.h"', ["src/lib.c", "test/main.c"])
    else:
        _project(tmp_path, "<rec.h>", ["src/lib.c", "test/main.c"])
        (tmp_path / "include").rmdir()
        (tmp_path / "include").symlink_to("src")
    monkeypatch.chdir(tmp_path)
    code, _out, err = cachefit("reorder", "rec", "--order", "refcount,type", "-p", tmp_path,
                               "--in-place")
    assert code == 0, err
    text = (tmp_path / "src" / "rec.h").read_text()
    assert text.index("long refcount") < text.index("int type")
    assert _run(tmp_path, "src/lib.c", "test/main.c") == "type=7 refcount=1\n"


STATE_A = """\
#include <stdio.h>
struct state { char tag; long count; char mode; };
static struct state s_a = {.tag = 'a', .count = 3, .mode = 'x'};
int other(void);
int main(void) {
    printf("%c %ld %c %zu %d\\n", s_a.tag, s_a.count, s_a.mode, sizeof s_a, other());
    return 0;
}
"""
STATE_B = """\
struct state { int only; };
static struct state s_b = {.only = 5};
int other(void) { return s_b.only; }
"""


def test_records_each_c_file_defines_for_itself_are_distinct(tmp_path: Path,
                                                             cachefit) -> None:
    write(tmp_path, {"a.c": STATE_A, "b.c": STATE_B})
    code, _out, err = cachefit("reorder", "state", tmp_path / "a.c", tmp_path / "b.c",
                               "--order", "count,tag,mode", "--in-place", "--", "-std=c11")
    assert code == 0, err
    text = (tmp_path / "a.c").read_text()
    assert "struct state { long count; char tag; char mode; };" in text
    assert (tmp_path / "b.c").read_text() == STATE_B
    assert _two_units(tmp_path, "gcc", "-std=c11", "a.c", "b.c") == "a 3 x 16 5\n"


def test_classes_in_anonymous_namespaces_are_distinct(tmp_path: Path, cachefit) -> None:
    a = ("#include <cstdio>\nnamespace {\nstruct S { char c; long l; char d; };\n}\n"
         "int other();\nint main() { S s; s.c = 'a'; s.l = 2; s.d = 'b'; "
         "std::printf(\"%c %ld %c %d\\n\", s.c, s.l, s.d, other()); }\n")
    b = "namespace {\nstruct S { int x; };\n}\nint other() { S s{4}; return s.x; }\n"
    write(tmp_path, {"a.cc": a, "b.cc": b})
    code, _out, err = cachefit("reorder", "S", tmp_path / "a.cc", tmp_path / "b.cc",
                               "--order", "l,c,d", "--in-place", "--", "-std=c++17")
    assert code == 0, err
    assert "struct S { long l; char c; char d; };" in (tmp_path / "a.cc").read_text()
    assert (tmp_path / "b.cc").read_text() == b
    assert _two_units(tmp_path, "g++", "-std=c++17", "a.cc", "b.cc") == "a 2 b 4\n"


def test_unrelated_records_of_one_tag_in_two_headers_are_distinct(tmp_path: Path,
                                                                  cachefit) -> None:
    """Two libraries' headers each define their own `struct node` (other members): units
    that see the other one do not share objects of this one, so the reorder goes ahead,
    with a warning naming the other and how to choose it (redis's `dict` and hiredis's)."""
    write(tmp_path, {
        "list.h": "struct node { char tag; long value; char kind; };\n"
                  "long list_sum(void);\n",
        "tree.h": "struct node { struct node *left, *right; int key; };\nint tree_key(void);\n",
        "list.c": "#include \"list.h\"\nlong list_sum(void) {\n"
                  "    struct node n = {.tag = 'a', .value = 40, .kind = 2};\n"
                  "    return n.value + n.kind + (n.tag == 'a');\n}\n",
        "tree.c": "#include \"tree.h\"\nint tree_key(void) {\n"
                  "    struct node n = {.left = 0, .right = 0, .key = 5};\n"
                  "    return n.key + (n.left == n.right);\n}\n",
        "main.c": "#include <stdio.h>\nlong list_sum(void);\nint tree_key(void);\n"
                  "int main(void) { printf(\"%ld %d\\n\", list_sum(), tree_key()); }\n"})
    code, out, err = cachefit("reorder", "node", tmp_path / "list.c", tmp_path / "tree.c",
                              "--order", "value,tag,kind", "--in-place", "--", "-std=c11")
    assert code == 0, err
    warning = [w for w in (out + err).splitlines() if "another node" in w]
    assert len(warning) == 1 and "tree.h:1;" in warning[0] and "list.h:1 is rewritten" in \
        warning[0] and "give the file that defines it first" in warning[0], out + err
    assert "struct node { long value; char tag; char kind; };" in \
        (tmp_path / "list.h").read_text()
    assert "left, *right" in (tmp_path / "tree.h").read_text()
    assert _two_units(tmp_path, "gcc", "-std=c11", "list.c", "tree.c", "main.c") == "43 6\n"
