"""Rewriting a C record: the program behaves the same and the layout is the compiler's.

A small C program prints its field values (and runs an offsetof-range memset), then the
layout of every field (offset, alignment). After `cachefit reorder --order`, compiled with
gcc and clang-19, the values must be identical, the offsets those cachefit reported from
the compiler, every offset aligned, and comments, attributes and the macro header intact.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from reorder_helpers import C_COMPILERS, build_and_run, write

HEADER = """\
#include <stddef.h>
#include <string.h>
#define HEADER int kind; int refs
struct obj {
    HEADER;                 /* shared header */
    /* the a/b pair */
    int a, b;               // trailing ab
    double d __attribute__((aligned(16)));
    struct { short u; short v; };
    unsigned flag : 1, mode : 3;
    char tag;
    long tail;
};
"""

MAIN = """\
#include <stdio.h>
#include "rec.h"
#define L(f) printf("L %s %zu %zu\\n", #f, offsetof(struct obj, f), \\
                    (size_t)__alignof__(((struct obj *)0)->f))
int main(void) {
    struct obj o;
    memset(&o, 0, sizeof o);
    o.kind = 1; o.refs = 2; o.a = 3; o.b = 4; o.d = 5.5; o.u = 6; o.v = 7;
    o.flag = 1; o.mode = 5; o.tag = 'x'; o.tail = 9;
    printf("V %d %d %d %d %g %d %d %u %u %c %ld\\n", o.kind, o.refs, o.a, o.b, o.d, o.u,
           o.v, o.flag, o.mode, o.tag, o.tail);
    printf("S %zu %zu\\n", sizeof o, (size_t)_Alignof(struct obj));
    L(kind); L(refs); L(a); L(b); L(d); L(u); L(v); L(tag); L(tail);
    return 0;
}
"""

ORDER = "tail,flag,mode,tag,b,d,u,v,kind,refs,a"


def _layout(output: str) -> dict[str, tuple[int, int]]:
    out = {}
    for line in output.splitlines():
        if line.startswith("L "):
            _, name, off, align = line.split()
            out[name] = (int(off), int(align))
    return out


def _values(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith("V ")]


@pytest.mark.parametrize("cc", C_COMPILERS)
def test_c_program_behaves_the_same(tmp_path: Path, cachefit, cc: str) -> None:
    write(tmp_path, {"rec.h": HEADER, "main.c": MAIN})
    before = build_and_run(tmp_path, "main.c", cc, "-std=gnu11")
    new = tmp_path / "new"
    new.mkdir()
    shutil.copy(tmp_path / "main.c", new / "main.c")
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "main.c",
                              "--order", ORDER, "-o", new / "rec.h", "--json",
                              "--", "-std=gnu11")
    assert code == 0, err
    report = json.loads(out)
    after = build_and_run(new, "main.c", cc, "-std=gnu11")
    assert _values(after) == _values(before)
    layout = _layout(after)
    assert {n: off for n, (off, _) in layout.items()} == \
        {n: report["offsets"][n] for n in layout}
    assert all(off % align == 0 for off, align in layout.values())
    size_line = next(ln for ln in after.splitlines() if ln.startswith("S "))
    assert int(size_line.split()[1]) == report["size"]["after"]
    assert report["new_order"] == ORDER.split(",")
    assert (tmp_path / "rec.h").read_text() == HEADER      # -o leaves the source alone


def test_text_keeps_comments_attributes_and_units(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": HEADER})
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", "--order", ORDER,
                              "--", "-std=gnu11")
    assert code == 0, err
    for piece in ("/* shared header */", "/* the a/b pair */", "// trailing ab",
                  "__attribute__((aligned(16)))", "struct { short u; short v; };",
                  "unsigned flag : 1, mode : 3;"):
        assert out.count(piece) == 1, piece
    body = out[out.index("struct obj {"):out.rindex("};")]
    lines = [ln.strip() for ln in body.splitlines()[1:] if ln.strip()]
    # `int a, b;` is split: b goes before d, a after the header; comments follow their part.
    assert "int b;               // trailing ab" in lines
    assert lines.index("int b;               // trailing ab") < lines.index(
        "HEADER;                 /* shared header */") < lines.index("int a;")
    assert lines[lines.index("int a;") - 1] == "/* the a/b pair */"
    assert lines[:3] == ["long tail;", "unsigned flag : 1, mode : 3;", "char tag;"]
    assert "split declarations: a" in err


def _reordered(tmp_path: Path, cachefit, name: str, src: str, order: str) -> str:
    """The text from `struct NAME {` on after reordering `src` (a header) to `order`."""
    write(tmp_path, {f"{name}.h": src})
    code, out, err = cachefit("reorder", name, tmp_path / f"{name}.h", "--order", order,
                              "--", "-std=c11")
    assert code == 0, err
    return out[out.index(f"struct {name} {{"):]


def test_continued_trailing_comment_moves_with_its_member(tmp_path: Path, cachefit) -> None:
    """zlib's gz_state: comment-only lines aligned under a member's trailing comment
    continue it; a comment at another column before the next member is that one's."""
    src = ("struct pos { unsigned have; long at; };\n"
           "struct t {\n"
           "    struct pos x;           /* exposed part */\n"
           "                            /* x.have: bytes available */\n"
           "                            /* x.at: position */\n"
           "    int mode;               /* mode */\n"
           "    /* the cold one */\n"
           "    long cold;\n"
           "    long hot;               /* hot */\n"
           "};\n")
    body = _reordered(tmp_path, cachefit, "t", src, "hot,x,cold,mode").splitlines()
    assert body[1:9] == ["    long hot;               /* hot */",
                         "    struct pos x;           /* exposed part */",
                         "                            /* x.have: bytes available */",
                         "                            /* x.at: position */",
                         "    /* the cold one */",
                         "    long cold;",
                         "    int mode;               /* mode */",
                         "};"]


def test_comment_below_its_member_moves_with_it(tmp_path: Path, cachefit) -> None:
    """zlib's deflate.h: a comment block right under a member and followed by a blank line
    (or the end of the members) documents that member."""
    src = ("struct s {\n"
           "    long cold0;\n"
           "\n"
           "    char *window;\n"
           "    /* Sliding window. Input bytes are read into the second half\n"
           "     * of the window.\n"
           "     */\n"
           "\n"
           "    long size;\n"
           "    /* Actual size of window */\n"
           "    long hot;\n"
           "    long last;\n"
           "    /* the last one */\n"
           "};\n")
    body = _reordered(tmp_path, cachefit, "s", src, "last,hot,window,cold0,size")
    lines = [ln.strip() for ln in body.splitlines()[1:] if ln.strip()]
    assert lines[:3] == ["long last;", "/* the last one */", "/* Actual size of window */"]
    assert lines[3:8] == ["long hot;", "char *window;",
                          "/* Sliding window. Input bytes are read into the second half",
                          "* of the window.", "*/"]
    assert lines[8:] == ["long cold0;", "long size;", "};"]


def test_group_markers_after_a_blank_line_stay_where_they_are(tmp_path: Path,
                                                              cachefit) -> None:
    """libyaml's Doxygen groups: `@name ... @{` / `@}` blocks set off by blank lines are
    not a member's comments; they stay in place and stay balanced."""
    src = ("struct p {\n\n"
           "    /**\n     * @name Errors\n     * @{\n     */\n\n"
           "    /** Error type. */\n    int error;\n"
           "    /** Error text. */\n    const char *problem;\n\n"
           "    /**\n     * @}\n     */\n\n"
           "    /** @name Scanner @{ */\n\n"
           "    /** Indentation. */\n    int indent;\n\n"
           "    /** @} */\n};\n")
    body = _reordered(tmp_path, cachefit, "p", src, "indent,problem,error")
    opened = [i for i in range(len(body)) if body.startswith("@{", i)]
    closed = [i for i in range(len(body)) if body.startswith("@}", i)]
    assert len(opened) == len(closed) == 2
    assert all(o < c for o, c in zip(opened, closed, strict=True))
    assert body.index("@name Errors") < body.index("/** Indentation. */") < \
        body.index("int indent;")
    assert body.index("/** Error text. */") < body.index("const char *problem;") < \
        body.index("/** Error type. */") < body.index("int error;")


def test_macro_group_must_stay_together(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": HEADER})
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.h", "--order",
                            "kind,tail,refs,tag,u,v,b,d,a,flag,mode", "--", "-std=gnu11")
    assert code == 2
    assert "declared by one expansion of macro HEADER" in err
    assert f"{tmp_path / 'rec.h'}:5:5" in err


def test_one_line_struct_and_unchanged_order(tmp_path: Path, cachefit) -> None:
    src = "struct p { char c; int x; /* y */ short y; };\nstruct p g;\n"
    write(tmp_path, {"p.h": src})
    code, out, err = cachefit("reorder", "p", tmp_path / "p.h", "--order", "x,y,c",
                              "--", "-std=c11")
    assert code == 0, err
    assert out.splitlines()[0] == "struct p { int x; /* y */ short y; char c; };"
    code, out, _ = cachefit("reorder", "p", tmp_path / "p.h", "--order", "c,x,y",
                            "--", "-std=c11")
    assert code == 0 and out == src


def test_typedef_anonymous_struct_and_diff_applies(tmp_path: Path, cachefit,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    src = ("typedef struct {\n"
           "    char c;   /* one */\n"
           "\n"
           "    /* section */\n"
           "    double d;\n"
           "    int i;\n"
           "} rec_t;\n")
    write(tmp_path, {"r.h": src})
    monkeypatch.chdir(tmp_path)
    code, out, err = cachefit("reorder", "rec_t", "r.h", "--order", "d,i,c", "--diff",
                              "--", "-std=c11")
    assert code == 0, err
    assert out.startswith("--- a/r.h\n+++ b/r.h\n") and "+    char c;   /* one */" in out
    assert (tmp_path / "r.h").read_text() == src            # --diff writes nothing
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    (tmp_path / "p.diff").write_text(out)
    subprocess.run([git, "apply", "p.diff"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "r.h").read_text() == ("typedef struct {\n"
                                              "    /* section */\n"
                                              "    double d;\n"
                                              "    int i;\n"
                                              "    char c;   /* one */\n"
                                              "} rec_t;\n")


def test_fields_sharing_lines_with_braces_and_crlf(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"e.h": "struct s { int a;\n  long b;\n#define S_FLAG 1\n"
                            "  char c; /* c */ short d; };\n"})
    # The #define splits the member list: each side is reordered on its side
    # (test_member_list_defines); moving c, d above it is refused.
    code, out, err = cachefit("reorder", "s", tmp_path / "e.h", "--order", "b,a,d,c",
                              "--", "-std=c11")
    assert code == 0, err
    assert out == ("struct s {\n  long b;\n  int a;\n#define S_FLAG 1\n  /* c */ short d;\n"
                   "  char c;\n  };\n")
    code, out, err = cachefit("reorder", "s", tmp_path / "e.h", "--order", "d,c,b,a",
                              "--", "-std=c11")
    assert code == 2 and "#define S_FLAG in the member list" in err
    (tmp_path / "w.h").write_bytes(b"struct w {\r\n    int a;   // a\r\n    long b;\r\n"
                                   b"    char c;\r\n};\r\n")
    code, out, err = cachefit("reorder", "w", tmp_path / "w.h", "--order", "c,b,a",
                              "-o", tmp_path / "w2.h", "--", "-std=c11")
    assert code == 0, err
    assert (tmp_path / "w2.h").read_bytes() == (b"struct w {\r\n    char c;\r\n    long b;\r\n"
                                                b"    int a;   // a\r\n};\r\n")


def test_type_macros_are_not_macro_units(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"m.h": "#define u32 unsigned int\n#define PAIR(a, b) int a; int b\n"
                            "struct m {\n    u32 x;  /* x */\n    PAIR(p, q);\n"
                            "    u32 y, z;\n    char c;\n};\n"})
    code, out, err = cachefit("reorder", "m", tmp_path / "m.h", "--order", "c,z,p,q,x,y",
                              "--", "-std=c11")
    assert code == 0, err
    assert out.endswith("struct m {\n    char c;\n    u32 z;\n    PAIR(p, q);\n"
                        "    u32 x;  /* x */\n    u32 y;\n};\n")


def test_fields_all_set_off_by_blank_lines_stay_so(tmp_path: Path, cachefit) -> None:
    """A member list that separates every field by a blank line keeps doing so after the
    reorder (libevent's bufferevent_private lost two), whether or not a field has a
    comment; a list without that style gets no new blank lines."""
    src = ("struct priv {\n"
           "\t/** The underlying structure. */\n"
           "\tlong bev;\n"
           "\n"
           "\t/** Lock. */\n"
           "\tvoid *lock;\n"
           "\n"
           "\tint refcnt;\n"
           "\n"
           "\tvoid *dns_request;\n"
           "};\n")
    write(tmp_path, {"s.h": src})
    code, out, err = cachefit("reorder", "priv", tmp_path / "s.h", "--order",
                              "lock,refcnt,bev,dns_request", "--", "-x", "c")
    assert code == 0, err
    assert out == ("struct priv {\n"
                   "\t/** Lock. */\n"
                   "\tvoid *lock;\n"
                   "\n"
                   "\tint refcnt;\n"
                   "\n"
                   "\t/** The underlying structure. */\n"
                   "\tlong bev;\n"
                   "\n"
                   "\tvoid *dns_request;\n"
                   "};\n")
    dense = "struct d {\n\tlong a;\n\tint b;\n\tchar c;\n};\n"
    write(tmp_path, {"d.h": dense})
    code, out, err = cachefit("reorder", "d", tmp_path / "d.h", "--order", "c,b,a",
                              "--", "-x", "c")
    assert code == 0, err
    assert out == "struct d {\n\tchar c;\n\tint b;\n\tlong a;\n};\n"


@pytest.mark.parametrize("order", ["a,c,b", "c,b,a", "b,a,c"])
def test_fields_on_the_brace_line_and_the_next(tmp_path: Path, cachefit, order: str) -> None:
    """Fields that start on the brace's line and go on to the next one: the blanks after
    one field are the blanks before the next, and the rewrite crashed ("overlapping member
    edits"). It must give the order, compile and keep the values."""
    src = ("struct k { int a; int b;\n  int c; };\n"
           "int main(void) { struct k x = {.a = 1, .b = 2, .c = 3};\n"
           "    return x.a + x.b * 10 + x.c * 100 != 321; }\n")
    write(tmp_path, {"k.c": src})
    code, out, err = cachefit("reorder", "k", tmp_path / "k.c", "--order", order,
                              "--", "-std=c11")
    assert code == 0, err
    names = order.split(",")
    assert [out.index(f"int {n};") for n in names] == sorted(out.index(f"int {n};")
                                                             for n in names)
    write(tmp_path, {"k.c": out})
    assert build_and_run(tmp_path, "k.c", "gcc", "-std=c11") == ""


def test_runaway_invocations_are_reported(tmp_path: Path, cachefit) -> None:
    # zstd's seqStore_t: every invocation's sequence was longer than max_accesses, the
    # profile kept none, and the figures read 0.00 -> 0.00 with no word of why.
    (tmp_path / "s.c").write_text("struct s { long x; char y; long z; };\n"
                                  "long f(struct s *p) { return p->x + p->z; }\n")
    fields = [{"name": "x", "offset": 0, "size": 8}, {"name": "y", "offset": 8, "size": 1},
              {"name": "z", "offset": 16, "size": 8}]
    for runaway, counted in ((66, 0), (22, 44)):
        seqs = [{"count": counted, "accesses": [[0, 0, 8, "r"], [0, 16, 8, "r"]]}] \
            if counted else []
        (tmp_path / "p.json").write_text(json.dumps(
            {"format": "cachefit-profile", "version": 1, "cache_line": 64,
             "invocations": runaway + counted,
             "types": {"s": {"size": 24, "fields": fields, "sequences": seqs,
                             "dropped": {"runaway": runaway, "outside_objects": 0,
                                         "table_full": 0}}}}))
        code, out, err = cachefit("reorder", "s", "--profile", tmp_path / "p.json",
                                  tmp_path / "s.c", "--json")
        assert code == 0, err
        warnings = json.loads(out)["warnings"]
        assert [w for w in warnings if w.startswith(
            f"{runaway} of {runaway + counted} invocations that touched s were cut off "
            "as runaway") and "max_accesses" in w], warnings


SECTIONED = """\
#include <stddef.h>
struct options {
  // -------------------
  // Parameters that affect behavior

  // Comparator used to define the order of keys.
  const char *comparator;

  // If true, create the database.
  int create_if_missing;

  // -------------------
  // Parameters that affect performance

  // Amount of data to build up in memory.
  size_t write_buffer_size;

  // Number of open files.
  int max_open_files;

  // Control over blocks (user data is stored in a set of blocks, and
  // a block is the unit of reading from disk).

  // If non-null, use the specified cache for blocks.
  void *block_cache;

  // Approximate size of user data packed per block.
  size_t block_size;
};
"""

SECTIONED_MAIN = """\
#include <stdio.h>
#include "o.h"
int main(void) {
    struct options o = {.comparator = "bytewise", .create_if_missing = 1,
                        .write_buffer_size = 4096, .max_open_files = 1000,
                        .block_cache = NULL, .block_size = 4096};
    printf("%s %d %zu %d %d %zu\\n", o.comparator, o.create_if_missing,
           o.write_buffer_size, o.max_open_files, o.block_cache == NULL, o.block_size);
    return 0;
}
"""

SECTIONS = {"Parameters that affect behavior": {"comparator", "create_if_missing"},
            "Parameters that affect performance": {"write_buffer_size", "max_open_files"},
            "Control over blocks": {"block_cache", "block_size"}}


def _comment_lines(text: str) -> Counter[str]:
    return Counter(ln.strip() for ln in text.splitlines() if ln.strip().startswith("//"))


@pytest.mark.parametrize("order", [
    "block_size,comparator,write_buffer_size,create_if_missing,block_cache,max_open_files",
    "write_buffer_size,max_open_files,comparator,create_if_missing,block_size,block_cache",
])
def test_section_headings_head_a_field_of_their_section(tmp_path: Path, cachefit,
                                                        order: str) -> None:
    """leveldb's Options: a comment set off from the next field by a blank line heads the
    fields up to the next such comment. It goes into the block right before the first field
    of its section in the new order, set off by blank lines (it used to stay behind, after
    the block, heading nothing); every comment is kept exactly once and the result
    compiles and behaves the same."""
    write(tmp_path, {"o.h": SECTIONED, "m.c": SECTIONED_MAIN})
    before = {cc: build_and_run(tmp_path, "m.c", cc, "-std=c11") for cc in C_COMPILERS}
    code, out, err = cachefit("reorder", "options", tmp_path / "o.h", "--order", order,
                              "--", "-std=c11")
    assert code == 0, err
    assert _comment_lines(out) == _comment_lines(SECTIONED)
    assert "\n\n\n" not in out and "{\n\n" not in out and "\n\n}" not in out
    lines = out.splitlines()
    for title, fields in SECTIONS.items():
        at = next(i for i, ln in enumerate(lines) if title in ln)
        assert lines[at + 1 + title.startswith("Control")] == "" and lines[at - 1] in (
            "", "struct options {", "  // -------------------")
        decl = next(ln for ln in lines[at:] if ln.strip() and not ln.strip().startswith("//"))
        assert decl.rstrip(";").split()[-1].lstrip("*") in fields, (title, out)
    write(tmp_path, {"o.h": out})
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "m.c", cc, "-std=c11") == before[cc]


def test_headings_kept_in_order_stay_in_place(tmp_path: Path, cachefit) -> None:
    """An order that keeps every section together changes only the fields' lines."""
    write(tmp_path, {"o.h": SECTIONED})
    code, out, err = cachefit("reorder", "options", tmp_path / "o.h", "--order",
                              "create_if_missing,comparator,max_open_files,write_buffer_size,"
                              "block_size,block_cache", "--", "-std=c11")
    assert code == 0, err
    swap = SECTIONED
    for a, b in (("  // Comparator used to define the order of keys.\n"
                  "  const char *comparator;\n",
                  "  // If true, create the database.\n  int create_if_missing;\n"),
                 ("  // Amount of data to build up in memory.\n  size_t write_buffer_size;\n",
                  "  // Number of open files.\n  int max_open_files;\n"),
                 ("  // If non-null, use the specified cache for blocks.\n"
                  "  void *block_cache;\n",
                  "  // Approximate size of user data packed per block.\n"
                  "  size_t block_size;\n")):
        swap = swap.replace(a + "\n" + b, b + "\n" + a)
    assert out == swap


def test_blank_line_goes_before_a_barrier_not_between_it_and_its_field(tmp_path: Path,
                                                                       cachefit) -> None:
    """A field with a leading comment set off by a blank line keeps that blank line before
    it; when the rewriter declares a zero-width bit-field right before it, the blank line
    goes before that barrier, which stays right above the field's comment."""
    src = ("struct rec {\n    unsigned int a : 3;\n    int x;\n\n    /* the c bits */\n"
           "    unsigned int c : 5;\n    int y;\n};\n")
    write(tmp_path, {"rec.h": src})
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", "a,c,x,y",
                              "--", "-std=c11")
    assert code == 0, err
    assert out == ("struct rec {\n    unsigned int a : 3;\n\n"
                   "    unsigned int : 0;  /* cachefit: new bit-field unit */\n"
                   "    /* the c bits */\n    unsigned int c : 5;\n    int x;\n    int y;\n};\n")


QUEUE_REC = """\
#define TAILQ_ENTRY(type) struct { struct type *tqe_next; struct type **tqe_prev; }
struct conn {
\t/* we use this tailq only if this connection was created for an http
\t * server */
\tTAILQ_ENTRY(conn) next;

\tint fd;
\tlong max_body_size;
};
"""


@pytest.mark.parametrize("cc", C_COMPILERS)
def test_comment_moves_with_a_field_whose_type_a_macro_writes(tmp_path: Path, cachefit,
                                                               cc: str) -> None:
    """libevent's evhttp_connection: `TAILQ_ENTRY(evhttp_connection) next;` with a comment
    above it. The macro writes the field's unnamed struct type but not its name: the
    struct and the field were two members starting at the same place, and the comment
    went with the struct (a type, which stays where it is): it was left at the top,
    above whatever field came first."""
    use = ('#include <stdio.h>\n#include "rec.h"\n'
           "int main(void) { struct conn c = {0}; c.fd = 3; c.max_body_size = 4;\n"
           "  c.next.tqe_next = &c;\n"
           '  printf("%d %ld %d\\n", c.fd, c.max_body_size, c.next.tqe_next == &c);\n'
           "  return 0; }\n")
    write(tmp_path, {"rec.h": QUEUE_REC, "use.c": use})
    code, _, err = cachefit("reorder", "conn", tmp_path / "rec.h", tmp_path / "use.c",
                            "--order", "fd,max_body_size,next", "--in-place")
    assert code == 0, err
    assert (tmp_path / "rec.h").read_text() == (
        "#define TAILQ_ENTRY(type) struct { struct type *tqe_next; struct type **tqe_prev; }\n"
        "struct conn {\n\tint fd;\n\tlong max_body_size;\n"
        "\t/* we use this tailq only if this connection was created for an http\n"
        "\t * server */\n\tTAILQ_ENTRY(conn) next;\n};\n")
    assert build_and_run(tmp_path, "use.c", cc, "-std=gnu11").split() == ["3", "4", "1"]


def test_diff_names_paths_from_the_git_top_so_git_apply_works_in_a_subdirectory(
        tmp_path: Path, cachefit, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in a subdirectory of a git work tree, `--diff` names files as `git diff` does,
    from the top (`a/src/rec.h`, not `a/rec.h`): `git apply` there applies the files below
    it, and at the top every file. A cwd-relative name made `git apply` in the
    subdirectory look for `rec.h` at the top and fail (redis's src/, found by a sweep)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    write(tmp_path / "src", {"rec.h": "struct rec { char c; double d; int i; };\n",
                             "main.c": '#include "rec.h"\nint main(void) { return 0; }\n'})
    monkeypatch.chdir(tmp_path / "src")
    code, out, err = cachefit("reorder", "rec", "rec.h", "main.c", "--order", "d,i,c",
                              "--diff", "--", "-std=c11")
    assert code == 0, err
    assert out.startswith("--- a/src/rec.h\n+++ b/src/rec.h\n"), out
    (tmp_path / "p.diff").write_text(out)
    subprocess.run([git, "apply", "--check", str(tmp_path / "p.diff")], cwd=tmp_path,
                   check=True, capture_output=True)
    subprocess.run([git, "apply", str(tmp_path / "p.diff")], cwd=tmp_path / "src",
                   check=True, capture_output=True)
    assert (tmp_path / "src" / "rec.h").read_text() == \
        "struct rec { double d; int i; char c; };\n"
