"""Struct copies by value: arguments and returns (programs/byvalue.c, byvalue.cc).

clang copies a struct into a by-value parameter or the return value with an unseen memcpy
(or the backend's byval copy) when it is passed in memory, and with loads of the source's
fields that sanitizer coverage does see when it is passed in registers: all of them at
-O0, only those the callee uses at -O2. The wrapper's rewrite (cachefit.trace.struct_copies)
makes every such copy one read of the whole source, [role, 0, size, "r"], at every
optimisation level; the rewritten programs must print what plain builds print. gcc's
thread sanitizer has the same gap (it sees no copy into a by-value parameter at -O0 and the
fields the callee uses at -O2), so gcc units get the same rewrite and the same profile.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from trace_helpers import PROGRAMS, build, needs_clang, needs_gcc, seqs

R, W = "r", "w"
WHOLE = (0, 0, 24, R)       # struct obj, passed in memory
DUO = (0, 0, 16, R)         # struct duo, passed in two registers
WARN = "struct copy not traced"
FLAGS = ("-g", "-Wall", "-Wextra", "-Werror")

C_ENTRIES = ["arg", "two", "hold", "ret", "argd", "inl", "retd", "words", "local",
             "unseen"]
C_OBJ = {
    (WHOLE,): 2,                          # arg: take(*p); local: struct obj x = g[i];
    (WHOLE, (1, 0, 24, R)): 1,            # two: take2(g[i], g[j]), left to right
    (WHOLE, (0, 0, 4, R)): 1,             # hold: takeh(h) reads h.o whole, then h.o.a
    ((0, 16, 1, W), WHOLE): 1,            # ret: g[i].c = 'r'; return g[i];
}
C_DUO = {
    (DUO,): 1,                            # argd: taked(*q)
    (DUO, DUO): 1,                        # inl: two calls of an inlined callee
    ((0, 0, 8, W), DUO): 1,               # retd: q->x = 5; return *q;
}
# words: takew(w[i]); w[1 - i] = w[i]; (the assignment is a read and a write, once each)
WORD = {((0, 0, 8, R), (0, 0, 8, R), (1, 0, 8, W)): 1}

CXX_ENTRIES = ["arg", "calls", "ret", "braced", "local", "konst", "user", "words",
               "unseen"]
CXX_OBJ = {
    (WHOLE,): 2,                          # arg: take(*p); braced: return {g[i]};
    (WHOLE, (1, 0, 24, R), WHOLE): 1,     # calls: s.m(*p), s + r, box x(*p)
    ((0, 16, 1, W), WHOLE): 1,            # ret: p->c = 'r'; return *p;
    (WHOLE, WHOLE): 1,                    # local: obj x = g[i]; take(g[i]); return x;
    ((0, 0, 4, R),): 1,                   # unseen: only by_any's own read of o.a
}
CXX_TALLY = {((0, 0, 8, R),): 1}          # user: the user copy constructor reads t.n


def plain_output(tmp: Path, source: str, compiler: str, opt: str) -> str:
    """What the program prints when built without cachefit."""
    exe = tmp / "plain"
    subprocess.run([compiler, opt, str(PROGRAMS / source), "-I", str(PROGRAMS), "-o",
                    str(exe)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def warned_lines(stderr: str, source: str) -> list[str]:
    """`LINE:COL: reason` of the struct-copy warnings about `source`."""
    prefix = f"cachefit: warning: {source}:"
    return [line[len(prefix):] for line in stderr.splitlines()
            if line.startswith(prefix) and WARN in line]


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_c_copies_by_value_are_one_whole_read(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["byvalue.c"], types=["obj", "duo", "word"], entry=C_ENTRIES,
              flags=(opt, *FLAGS))
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, "byvalue.c", "clang-19", opt)
    assert seqs(prof, "obj") == C_OBJ
    assert seqs(prof, "duo") == C_DUO
    assert seqs(prof, "word") == WORD
    assert prof.invocations == len(C_ENTRIES)
    assert prof.types["obj"].outside_objects == 0
    # `take(make(n))` copies a temporary, no object: nothing to report.
    assert warned_lines(b.compile_stderr, "byvalue.c") == [
        f"77:19: {WARN}: an operand has side effects",          # take(*p++)
        f"78:15: {WARN}: an operand is not a plain lvalue",     # take(n ? p[1] : p[2])
    ]


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_cxx_copies_by_value_are_one_whole_read(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["byvalue.cc"], types=["obj", "tally", "word"], entry=CXX_ENTRIES,
              compiler="clang++-19", cxx=True, flags=(opt, *FLAGS))
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, "byvalue.cc", "clang++-19", opt)
    assert seqs(prof, "obj") == CXX_OBJ
    assert seqs(prof, "tally") == CXX_TALLY
    assert seqs(prof, "word") == WORD
    assert prof.invocations == len(CXX_ENTRIES)
    assert warned_lines(b.compile_stderr, "byvalue.cc") == [
        f"97:19: {WARN}: an operand is not a plain lvalue",     # take(std::move(*p))
        f"98:15: {WARN}: an operand has side effects",          # take(*p++)
        f"100:26: {WARN}: the call depends on a template parameter",  # by_any(n, *p)
    ]


@needs_gcc
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("source", ["byvalue.c", "byvalue.cc"])
def test_gcc_copies_by_value_are_one_whole_read(tmp_path: Path, source: str,
                                                opt: str) -> None:
    # `unseen` is no entry here: gcc's own instrumentation sees parts of the copies left
    # alone there (which parts depends on -O); nor is `words`, whose assignment gcc reports
    # itself (test_trace_memops.py). Everything else matches clang exactly.
    cxx = source.endswith(".cc")
    compiler = "g++" if cxx else "gcc"
    entries = [e for e in (CXX_ENTRIES if cxx else C_ENTRIES) if e not in ("unseen", "words")]
    types = ["obj", "tally"] if cxx else ["obj", "duo"]
    b = build(tmp_path, [source], types=types, entry=entries, compiler=compiler, cxx=cxx,
              flags=(opt, *FLAGS))
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, source, compiler, opt)
    if cxx:
        assert seqs(prof, "obj") == {k: v for k, v in CXX_OBJ.items() if k != ((0, 0, 4, R),)}
        assert seqs(prof, "tally") == CXX_TALLY
    else:
        assert seqs(prof, "obj") == C_OBJ
        assert seqs(prof, "duo") == C_DUO
    assert prof.invocations == len(entries)
    assert len(warned_lines(b.compile_stderr, source)) == (3 if cxx else 2)
