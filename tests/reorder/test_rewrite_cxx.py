"""Rewriting a C++ class: access levels kept, types declared before use, same behaviour."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reorder_helpers import CXX_COMPILERS, build_and_run, write

from cachefit.frontend.clang_records import load_record

HEADER = """\
#pragma once
#include <cstdint>
class thing {
public:
    thing() : id(7), twice(id * 2) {}
    int get_id() const { return id; }
    int get_twice() const { return twice; }
    std::uint8_t flags = 3;     // public flags
protected:
    short prot_a, prot_b;
private:
    typedef long counter_t;
    counter_t hits = 0;
    static int instances;
    int id;
    int twice;
    char name[5] = "abcd";
public:
    double ratio = 0.5;
};
"""

MAIN = """\
#include <cstdio>
#include <cstddef>
#include "k.hh"
int thing::instances = 0;
struct peek : thing {
    void set() { prot_a = 11; prot_b = 22; }
    int sum() const { return prot_a + prot_b; }
};
int main() {
    peek t;
    t.set();
    std::printf("V %d %d %d %d %g\\n", t.get_id(), t.get_twice(), t.flags, t.sum(), t.ratio);
    std::printf("S %zu %zu\\n", sizeof(thing), alignof(thing));
}
"""

ORDER = "ratio,id,prot_b,hits,twice,flags,name,prot_a"


@pytest.mark.parametrize("cxx", CXX_COMPILERS)
def test_cxx_class_keeps_access_and_behaviour(tmp_path: Path, cachefit, cxx: str) -> None:
    write(tmp_path, {"k.hh": HEADER, "m.cc": MAIN})
    before = build_and_run(tmp_path, "m.cc", cxx, "-std=c++17")
    new = tmp_path / "new"
    new.mkdir()
    shutil.copy(tmp_path / "m.cc", new / "m.cc")
    code, out, err = cachefit("reorder", "thing", tmp_path / "k.hh", tmp_path / "m.cc",
                              "--order", ORDER, "-o", new / "k.hh", "--", "-std=c++17")
    assert code == 0, err
    after = build_and_run(new, "m.cc", cxx, "-std=c++17")
    assert after.splitlines()[0] == before.splitlines()[0]
    old_rec = load_record(str(tmp_path / "k.hh"), ["-std=c++17"], "thing")
    new_rec = load_record(str(new / "k.hh"), ["-std=c++17"], "thing")
    assert [f.name for f in new_rec.fields] == ORDER.split(",")
    assert {f.name: f.access for f in new_rec.fields} == \
        {f.name: f.access for f in old_rec.fields}
    assert all(f.offset % f.align == 0 for f in new_rec.fields)
    assert after.splitlines()[1] == f"S {new_rec.size} {new_rec.align}"


def test_cxx_text_layout(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"k.hh": HEADER})
    code, out, err = cachefit("reorder", "thing", tmp_path / "k.hh", "--order", ORDER,
                              "--", "-std=c++17")
    assert code == 0, err
    body = out[out.index("class thing {"):]
    # The typedef fields use stays before them: the block goes where the last field was.
    assert body.index("typedef long counter_t;") < body.index("counter_t hits = 0;")
    assert "std::uint8_t flags = 3;     // public flags" in body
    # `short prot_a, prot_b;` was split and each part is protected.
    lines = [ln.rstrip() for ln in body.splitlines()]
    i_b, i_a = lines.index("    short prot_b;"), lines.index("    short prot_a;")
    assert lines[i_b - 1] == "protected:" and lines[i_a - 1] == "protected:"
    # Methods keep their place and access.
    assert lines[1] == "public:" and lines[2].strip().startswith("thing() :")


def test_constructor_dependency_is_a_constraint(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"k.hh": HEADER})
    code, _, err = cachefit("reorder", "thing", tmp_path / "k.hh", "--order",
                            "twice,id,ratio,prot_b,hits,flags,name,prot_a", "--", "-std=c++17")
    assert code == 2
    assert "twice stays on its side of field id" in err
    assert f"{tmp_path / 'k.hh'}:5:28" in err


def test_constructor_initialiser_lists_follow_the_new_order(tmp_path: Path, cachefit) -> None:
    header = ("#pragma once\n"
              "struct S {\n"
              "    S() : a(1), /* b next */ b{2}, c(3) {}\n"
              "    S(int x);\n"
              "    int a;\n"
              "    long b;\n"
              "    char c;\n"
              "};\n")
    source = ('#include <cstdio>\n#include "s.hh"\n'
              "S::S(int x) : a(x), b(x + 1), c(static_cast<char>(x + 2)) {}\n"
              'int main() { S s, t(5); std::printf("%d %ld %d %d %ld %d\\n", '
              "s.a, s.b, s.c, t.a, t.b, t.c); }\n")
    write(tmp_path, {"s.hh": header, "s.cc": source})
    before = build_and_run(tmp_path, "s.cc", "g++", "-std=c++17")
    files = [tmp_path / "s.hh", tmp_path / "s.cc"]
    # -o: only the header is written; the other file is named in a warning.
    code, out, err = cachefit("reorder", "S", *files, "--order", "c,b,a",
                              "-o", tmp_path / "out.hh", "--", "-std=c++17")
    assert code == 0, err
    assert "S() : c(3), /* b next */ b{2}, a(1) {}" in (tmp_path / "out.hh").read_text()
    assert "s.cc not rewritten" in out and (tmp_path / "s.cc").read_text() == source
    code, _, err = cachefit("reorder", "S", *files, "--order", "c,b,a", "--in-place",
                            "--", "-std=c++17")
    assert code == 0, err
    assert "S::S(int x) : c(static_cast<char>(x + 2)), b(x + 1), a(x) {}" in \
        (tmp_path / "s.cc").read_text()
    for cxx in CXX_COMPILERS:      # -Wall -Werror: -Wreorder would fail the build
        assert build_and_run(tmp_path, "s.cc", cxx, "-std=c++17") == before


def _reordered_cc(tmp_path: Path, cachefit, source: str, order: str) -> str:
    """s.cc (struct S) reordered to `order`: the rewritten file."""
    write(tmp_path, {"s.cc": source})
    code, out, err = cachefit("reorder", "S", tmp_path / "s.cc", "--order", order,
                              "--", "-std=c++17")
    assert code == 0, err
    return out


def test_initialiser_comments_move_with_their_initialisers(tmp_path: Path, cachefit) -> None:
    """A comment that ends an initialiser's line (also after a `{}` body) stays with that
    initialiser; a line without one gets none (leveldb's `fd_(fd),  // the fd`)."""
    source = ("struct S {\n  S(int a, int b);\n  int a_;\n  int b_;\n  int c_;\n};\n"
              "S::S(int a, int b)\n"
              "    : a_(a),  // the first argument\n"
              "      b_(b),\n"
              "      c_(0) {}  // always zero\n"
              "int main() { S s(1, 2); return s.a_ == 1 && s.b_ == 2 ? 0 : 1; }\n")
    out = _reordered_cc(tmp_path, cachefit, source, "c_,b_,a_")
    assert ("    : c_(0),  // always zero\n"
            "      b_(b),\n"
            "      a_(a) {}  // the first argument\n") in out
    (tmp_path / "s.cc").write_text(out)
    for cxx in CXX_COMPILERS:
        build_and_run(tmp_path, "s.cc", cxx, "-std=c++17")


def test_initialiser_comments_stay_when_a_line_cannot_take_one(tmp_path: Path,
                                                               cachefit) -> None:
    """The last initialiser's line opens the body (`b_(b) {  // body`): no comment can go
    there, so the comments stay where they are and the code still compiles."""
    source = ("struct S {\n  S(int a, int b);\n  int a_;\n  int b_;\n};\n"
              "S::S(int a, int b)\n    : a_(a),  // first\n      b_(b) {  // the body\n"
              "  a_ += 0;\n}\nint main() { S s(1, 2); return s.a_ == 1 ? 0 : 1; }\n")
    out = _reordered_cc(tmp_path, cachefit, source, "b_,a_")
    assert "    : b_(b),  // first\n      a_(a) {  // the body\n" in out


@pytest.mark.parametrize("cxx", CXX_COMPILERS)
def test_explicit_leading_private_stays(tmp_path: Path, cachefit, cxx: str) -> None:
    """`class C { private: ...fields... public: ... }` keeps its explicit `private:` (snappy's
    SnappyArrayWriter lost it), and the class still compiles and behaves."""
    if shutil.which(cxx) is None:
        pytest.skip(f"{cxx} not installed")
    src = ("#include <cstdio>\n"
           "class writer {\n"
           " private:\n"
           "  char* base_;\n"
           "  char* op_;\n"
           "  char* limit_;\n"
           "\n"
           " public:\n"
           "  explicit writer(char* d) : base_(d), op_(d + 1), limit_(d + 3) {}\n"
           "  long span() const { return (op_ - base_) * 10 + (limit_ - base_); }\n"
           "};\n"
           "int main() { char b[4]; writer w(b); std::printf(\"%ld\\n\", w.span()); }\n")
    write(tmp_path, {"w.cc": src})
    code, out, err = cachefit("reorder", "writer", tmp_path / "w.cc", "--order",
                              "limit_,base_,op_", "--", "-std=c++17")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1:6] == ["class writer {", " private:", "  char* limit_;", "  char* base_;",
                          "  char* op_;"]
    assert lines.count(" private:") == 1
    before = build_and_run(tmp_path, "w.cc", cxx, "-std=c++17")
    write(tmp_path, {"w.cc": out})
    assert build_and_run(tmp_path, "w.cc", cxx, "-std=c++17") == before == "13\n"


def test_no_repeated_specifier_after_the_block(tmp_path: Path, cachefit) -> None:
    """tinyxml2's XMLNode: the last field is private like the methods after it. The block
    ends with `private:` for it, so the original `private:` right after would only repeat
    it; the specifiers added keep the class's blank line before them."""
    src = ("class Node {\n"
           "public:\n"
           "    Node() : _a(0), _b(0), _c(0), _pool(0) {}\n"
           "    int get() const { return _a + _b + _c + (_pool != 0); }\n"
           "\n"
           "protected:\n"
           "    int     _a;\n"
           "    int     _b;\n"
           "    int     _c;\n"
           "\n"
           "private:\n"
           "    void*   _pool;\n"
           "    void Unlink() {}\n"
           "};\n")
    write(tmp_path, {"n.hh": src})
    code, out, err = cachefit("reorder", "Node", tmp_path / "n.hh", "--order", "_b,_a,_c,_pool",
                              "--", "-std=c++17")
    assert code == 0, err
    body = out[out.index("protected:"):]
    assert body.count("private:") == 1
    assert body.startswith("protected:\n    int     _b;\n    int     _a;\n    int     _c;\n"
                           "\nprivate:\n    void*   _pool;\n")
    assert "void Unlink() {}" in body


def _reorder_and_build(tmp_path: Path, cachefit, name: str, src: str, type_name: str,
                       order: str) -> str:
    """`src` (a program defining `type_name`) reordered to `order`: the rewritten text,
    checked to compile with every C++ compiler and to print what the original printed."""
    write(tmp_path, {name: src})
    before = {cxx: build_and_run(tmp_path, name, cxx, "-std=c++17") for cxx in CXX_COMPILERS}
    code, out, err = cachefit("reorder", type_name, tmp_path / name, "--order", order,
                              "--", "-std=c++17")
    assert code == 0, err
    write(tmp_path, {name: out})
    for cxx in CXX_COMPILERS:
        assert build_and_run(tmp_path, name, cxx, "-std=c++17") == before[cxx]
    return out


PRINTER = """\
#include <cstdio>
class Printer {
public:
    Printer() : _open(false), _first(true), _depth(0), _text(-1), _flag(), _restricted(),
                _buffer() {}
    int Sum() const { return _open + _first + _depth + _text + _flag[0] + _stack[0] * 0; }

protected:
    void Seal() {}
    bool _open;
    int _stack[4] = {};

private:
    void PrintString(const char*) {}\t// prints out

    bool _first;
    int _depth;
    int _text;

    enum {
        RANGE = 8
    };
    bool _flag[RANGE];
    bool _restricted[RANGE];

    char _buffer[20];

    // Prohibit cloning
    Printer(const Printer&);
};
int main() { Printer p; std::printf("%d\\n", p.Sum()); }
"""


def test_removed_fields_take_one_of_their_blank_lines(tmp_path: Path, cachefit) -> None:
    """tinyxml2's XMLPrinter: the fields between `PrintString(...)` + blank line and blank
    line + `enum {...}` go after the enum (they use it); one of the two blank lines goes
    with them, so no two blank lines are left in a row."""
    out = _reorder_and_build(tmp_path, cachefit, "p.cc", PRINTER, "Printer",
                             "_stack,_first,_text,_depth,_open,_flag,_buffer,_restricted")
    assert "\n\n\n" not in out
    assert "void PrintString(const char*) {}\t// prints out\n\n    enum {\n" in out
    # the class sets its specifiers off by a blank line: so is the one opening the block
    assert "        RANGE = 8\n    };\n\nprotected:\n    int _stack[4] = {};\n" in out


@pytest.mark.parametrize(("src", "order", "expected"), [
    ("struct S {\n    int a;\n\n    typedef int T;\n    T b;\n    void f() {}\n};\n", "b,a",
     "struct S {\n    typedef int T;\n    T b;\n    int a;\n    void f() {}\n};\n"),
    ("struct S {\n    int a;\n    int c;\n    void f() {}\n\n    int b;\n};\n", "b,a,c",
     "struct S {\n    int b;\n    int a;\n    int c;\n    void f() {}\n};\n"),
])
def test_no_blank_line_left_after_the_brace_or_before_the_end(
        tmp_path: Path, cachefit, src: str, order: str, expected: str) -> None:
    """A field removed right after `{` (the block goes after a typedef) or right before `}`
    (the block goes where the first field was) leaves no blank line hanging there."""
    out = _reorder_and_build(tmp_path, cachefit, "s.cc", src + "int main() {}\n", "S", order)
    assert out == expected + "int main() {}\n"


NODE = """\
#include <cstdio>
class Node {
public:
    int Sum() const { return _a + _b + _c + _d + (_user != 0) + (_pool != 0); }
    explicit Node() : _a(1), _b(2), _c(3), _d(4), _user(0), _pool(0) {}

protected:
    virtual void Parse() {}

    int\t\t_a;
    int\t\t_b;

    int\t\t_c;
    int\t\t_d;

\tvoid*\t\t\t_user;

private:
    void*\t\t_pool;
    void Unlink() {}
};
int main() { Node n; std::printf("%d\\n", n.Sum()); }
"""


def test_kept_specifier_keeps_its_blank_line(tmp_path: Path, cachefit) -> None:
    """tinyxml2's XMLNode: the block ends with the access of the `private:` right after it.
    That specifier stays where it is, with the blank line before it, and the block's part
    after its own `private:` goes right under it (the blank line used to move after the
    last field: `_user;\\nprivate:\\n    _pool;\\n\\n    void Unlink`)."""
    out = _reorder_and_build(tmp_path, cachefit, "n.cc", NODE, "Node", "_a,_c,_b,_d,_user,_pool")
    assert ("    int\t\t_a;\n    int\t\t_c;\n    int\t\t_b;\n    int\t\t_d;\n"
            "\tvoid*\t\t\t_user;\n\nprivate:\n    void*\t\t_pool;\n    void Unlink() {}\n"
            ) in out
    assert out.count("private:") == 1


DOCUMENT = """\
#include <cstdio>
class Document {
public:
    int Sum() const { return _bom + _err + _depth + _unlinked[0] + _pool[1] + _comments[2]; }

private:
    void Parse() {}

    bool\t\t\t_bom = false;
    int\t\t\t\t_err = 1;
\tint\t\t\t\t_depth = 2;
\t// Memory tracking does add some overhead.
\t// However, the code assumes that you don't
\t// have a bunch of unlinked nodes around.
\tint _unlinked[10] = {3};

    int\t _pool[4] = {0, 4};
    int\t _comments[4] = {0, 0, 5};

\tstatic const char* _names[2];
};
const char* Document::_names[2] = {"a", "b"};
int main() { Document d; std::printf("%d\\n", d.Sum()); }
"""


def test_commented_member_keeps_the_blank_line_after_it(tmp_path: Path, cachefit) -> None:
    """tinyxml2's XMLDocument: `_unlinked`, whose leading comment documents it, was
    followed by a blank line; it still is, rather than having the next field glued under
    it (the blank line before such a member was kept already)."""
    out = _reorder_and_build(tmp_path, cachefit, "d.cc", DOCUMENT, "Document",
                             "_err,_pool,_depth,_bom,_unlinked,_comments")
    assert "\tint _unlinked[10] = {3};\n\n    int\t _comments[4] = {0, 0, 5};\n\n\tstatic" \
        in out
    assert "\n\n\n" not in out


@pytest.mark.parametrize(("order", "expected"), [
    ("b,a,c", "    int b;\n    int a;\n    // the c\n    int c;\n\n    void f() {}\n};\n"),
    ("c,a,b", "    // the c\n    int c;\n\n    int a;\n    int b;\n\n    void f() {}\n};\n"),
])
def test_blank_line_after_a_commented_member_is_not_doubled(
        tmp_path: Path, cachefit, order: str, expected: str) -> None:
    """The blank line after a member with a leading comment goes with it; at the block's
    end, where the kept text after the block starts with one, it is not doubled."""
    src = "struct D {\n    int a;\n    int b;\n    // the c\n    int c;\n\n    void f() {}\n};\n"
    out = _reorder_and_build(tmp_path, cachefit, "d.cc", src + "int main() {}\n", "D", order)
    assert out == "struct D {\n" + expected + "int main() {}\n"


SECTIONS_CLASS = """\
#include <cstdio>
class C {
 public:
  C() : a_(1), b_(2), c_(3) {}
  int sum() const { return a_ + b_ * 10 + c_ * 100 + d_ * 1000; }

 private:
  // State

  int a_;
  int b_;

  // Helpers

  void f() {}
  int d_ = 4;

  // Counters

  int c_;
};
int main() { C c; std::printf("%d\\n", c.sum()); }
"""


def test_heading_under_a_specifier_moves_with_its_section(tmp_path: Path, cachefit) -> None:
    """A heading right under `private:` and set off from the field after it by a blank line
    heads that field's section (it was the specifier's comment, and went when the specifier
    did); a heading before a method stays there, and ends the section before it."""
    out = _reorder_and_build(tmp_path, cachefit, "c.cc", SECTIONS_CLASS, "C", "c_,d_,a_,b_")
    assert (" private:\n  // Counters\n\n  int c_;\n\n  int d_ = 4;\n\n  // State\n\n"
            "  int a_;\n  int b_;\n\n  // Helpers\n\n  void f() {}\n};\n") in out


@pytest.mark.parametrize("order", ["b_,c_,a_", "c_,b_,a_"])
def test_comments_of_dropped_specifiers_are_kept(tmp_path: Path, cachefit, order: str) -> None:
    """Specifiers that govern no member any more go, but their comments (above, or on
    their line) stay with a specifier of the same access that the block emits."""
    src = ("#include <cstdio>\n"
           "class C {\n public:\n  C() : a_(1), b_(2), c_(3) {}\n"
           "  int sum() const { return a_ + b_ * 10 + c_ * 100; }\n\n"
           "  // the state\n private:  // all of it\n  int a_;\n  int b_;\n"
           " public:  // visible\n  int c_;\n};\n"
           "int main() { C c; std::printf(\"%d\\n\", c.sum()); }\n")
    out = _reorder_and_build(tmp_path, cachefit, "c.cc", src, "C", order)
    for comment in ("// the state\n private:  // all of it\n", " public:  // visible\n"):
        assert out.count(comment) == 1
    assert out.count("private:") == 2 - order.startswith("c_")


@pytest.mark.parametrize(("src", "order", "expected"), [
    # the block's text after its only specifier goes under the kept `private:`: the
    # removed first specifier and field leave no blank line after `{`
    ("class C {\nprivate:\n    int a;\n\nprivate:\n    int b;\n    void g() {}\n};\n", "b,a",
     "class C {\nprivate:\n    int b;\n    int a;\n    void g() {}\n};\n"),
    # `public:` right before the block would govern nothing: the block starts with its own
    ("class C {\npublic:\n    int x;\n    void f() {}\nprivate:\n    int a;\n\nprivate:\n"
     "    int b;\n    void g() {}\n};\n", "b,a,x",
     "class C {\nprivate:\n    int b;\n    int a;\npublic:\n    int x;\n    void f() {}\n\n"
     "private:\n    void g() {}\n};\n"),
])
def test_no_specifier_or_blank_line_left_without_members(
        tmp_path: Path, cachefit, src: str, order: str, expected: str) -> None:
    """Specifiers and blank lines that the rewrite would leave governing or separating
    nothing go."""
    main = "int main() { C c; (void)c; }\n"
    out = _reorder_and_build(tmp_path, cachefit, "c.cc", src + main, "C", order)
    assert out == expected + main
