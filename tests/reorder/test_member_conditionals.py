"""Preprocessor conditionals in a C++ member list: refused only when they may change which
data members exist (around or between data members, skipped code outside function bodies,
a group that could end a function body in another configuration); an `#if` inside a
method's body, or around a method after the last data member, is reordered."""

from __future__ import annotations

from pathlib import Path

import pytest
from reorder_helpers import CXX_COMPILERS, build_and_run, snapshot, write

HEAD = """\
#include <cstdio>
class Dec {
 private:
  const char* ip_;
  unsigned peeked_;
  bool eof_;

 public:
  Dec() : ip_(nullptr), peeked_(3), eof_(true) {}
"""
TAIL = """\
};
int main() {
  Dec d;
  std::printf("%d %u %zu\\n", d.eof(), d.peeked(), sizeof(Dec));
  return 0;
}
"""
EOF_BODY = "  bool eof() const { return eof_; }\n  unsigned peeked() const { return peeked_; }\n"

ACCEPTED = {
    # snappy's SnappyDecompressor: an attribute of a method template after the fields.
    "attribute-of-a-later-method": HEAD + """\
  template <class W>
#if defined(__GNUC__) && defined(__x86_64__)
  __attribute__((noinline))
#endif
  void Run(W* w) { w->Append(ip_); }
""" + EOF_BODY,
    # #ifndef NDEBUG in an inline method (active, and skipped with -DNDEBUG below).
    "ndebug-in-a-method-body": HEAD + """\
  bool eof() const {
#ifndef NDEBUG
    if (peeked_ > 1000) { return true; }
#endif
    return eof_;
  }
  unsigned peeked() const { return peeked_; }
""",
    # #if/#elif/#else with braces in each branch, inside a method body.
    "if-else-in-a-method-body": HEAD + """\
  unsigned peeked() const {
#if defined(NO_SUCH_MACRO)
    { return 0; }
#elif defined(NOR_THIS_ONE)
    for (;;) { return 1; }
#else
    { return peeked_; }
#endif
  }
  bool eof() const { return eof_; }
""",
    # A method declaration before the first data member.
    "method-before-the-fields": HEAD.replace(" private:\n", """\
 public:
#if defined(__GNUC__)
  __attribute__((cold)) void Cold() {}
#endif
 private:
""") + EOF_BODY,
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
@pytest.mark.parametrize("ndebug", [False, True])
def test_conditionals_that_cannot_change_the_members_are_reordered(
        tmp_path: Path, cachefit, case: str, ndebug: bool) -> None:
    write(tmp_path, {"dec.cc": ACCEPTED[case] + TAIL})
    flags = ["-DNDEBUG"] if ndebug else []
    code, _out, err = cachefit("reorder", "Dec", tmp_path / "dec.cc", "--order",
                               "eof_,peeked_,ip_", "--in-place", "--", "-std=c++17", *flags)
    assert code == 0, err
    text = (tmp_path / "dec.cc").read_text()
    assert text.index("bool eof_;") < text.index("unsigned peeked_;") < \
        text.index("const char* ip_;")
    if case == "attribute-of-a-later-method":
        text = text.replace("int main() {", "struct W { void Append(const char*) {} };\n"
                            "int main() {\n  W w;\n  Dec().Run(&w);")
        (tmp_path / "dec.cc").write_text(text)
    for cxx in CXX_COMPILERS:
        assert build_and_run(tmp_path, "dec.cc", cxx, "-std=c++17", flags) == "1 3 16\n"


REFUSED = {
    "around-a-data-member": (HEAD.replace("  bool eof_;\n", "#ifdef WITH_X\n  int x_;\n"
                                          "#endif\n  bool eof_;\n") + EOF_BODY, 6),
    "between-data-members": (HEAD.replace("  bool eof_;\n", """\
#if defined(__GNUC__)
  void Hot() {}
#endif
  bool eof_;
""") + EOF_BODY, 6),
    "skipped-member-after-the-fields": (HEAD + EOF_BODY + "#ifdef EXTRA\n  int extra_;\n"
                                        "#endif\n", 12),
    "skipped-branch-ends-the-body": (HEAD + """\
  void f() {
#ifdef SPLIT
  }
  int more_;
  void g() {
#endif
  }
""" + EOF_BODY, 11),
    "access-specifier-before-the-fields": (HEAD.replace(" private:\n", """\
#if defined(__GNUC__)
 public:
#endif
 private:
""") + EOF_BODY, 3),
    "group-across-two-bodies": (HEAD + """\
  void f() {
#if defined(__GNUC__)
  }
  void g() {
#endif
  }
""" + EOF_BODY, 11),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_conditionals_that_may_change_the_members_are_refused(tmp_path: Path, cachefit,
                                                             case: str) -> None:
    source, line = REFUSED[case]
    write(tmp_path, {"dec.cc": source + TAIL})
    before = snapshot([tmp_path / "dec.cc"])
    code, out, err = cachefit("reorder", "Dec", tmp_path / "dec.cc", "--order",
                              "eof_,peeked_,ip_", "--in-place", "--", "-std=c++17")
    assert code == 2, err
    assert not out and len(err.strip().splitlines()) == 1
    assert err.startswith(f"cachefit: error: {tmp_path / 'dec.cc'}:{line}:")
    assert "preprocessor conditionals" in err
    assert snapshot([tmp_path / "dec.cc"]) == before
