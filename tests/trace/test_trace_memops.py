"""memcpy/memmove/memset and struct copies in profile builds (programs/memops.c,
copies.c, copies.cc).

memops.c copies and fills fields of `struct obj` through the C library and a builtin; the
profile must hold one access per object element overlapped, of the overlapped size, and
only in instrumented functions. clang lowers whole-struct copies to llvm.memcpy, which
sanitizer coverage does not see: the wrapper rewrites assignments and copy-initialisations
from lvalues to note the copy first (cachefit.trace.struct_copies), so both backends see
them (gcc's thread sanitizer reports them itself). The rewritten programs must print what
the plain builds print, at -O0 and -O2.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from trace_helpers import (
    PROGRAMS,
    build,
    calls_in,
    needs_clang,
    needs_gcc,
    seqs,
)

R, W = "r", "w"
COPY = ((0, 8, 9, R), (1, 8, 9, W), (1, 0, 4, W), (0, 0, 4, R))
CLEAR = ((0, 0, 24, W), (1, 0, 24, W))
ENTRIES = ["copy", "clear", "assign"]
WHOLE_R, WHOLE_W = (0, 0, 24, R), (1, 0, 24, W)


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_sees_memcpy_memmove_memset(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES, flags=(opt, "-g"))
    prof = b.trace()
    assert b.run().split()[0] == "7"
    # assign(): the struct copy is noted by the rewrite (source read first), then the field.
    assert seqs(prof, "obj") == {COPY: 2, CLEAR: 2, (WHOLE_R, WHOLE_W, (1, 16, 1, W)): 1}
    assert prof.invocations == 5
    assert prof.types["obj"].outside_objects == 0


@needs_gcc
def test_gcc_sees_memops_and_struct_copies(tmp_path: Path) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES, compiler="gcc")
    prof = b.trace()
    # gcc's thread sanitizer reports the struct copy as a write and a read range.
    assert seqs(prof, "obj") == {COPY: 2, CLEAR: 2,
                                 ((0, 0, 24, W), (1, 0, 24, R), (0, 16, 1, W)): 1}


@needs_clang
def test_memops_are_redirected_only_in_instrumented_functions(tmp_path: Path) -> None:
    b = build(tmp_path, ["memops.c"], types=["obj"], entry=ENTRIES,
              config_extra='instrument = ["clear"]\n')
    prof = b.trace()
    assert "__cachefit_memcpy" not in calls_in(b.program, "copy")
    assert seqs(prof, "obj") == {CLEAR: 2}
    assert prof.invocations == 5


def plain_output(tmp: Path, source: str, compiler: str, opt: str) -> str:
    """What the program prints when built without cachefit."""
    exe = tmp / "plain"
    subprocess.run([compiler, opt, str(PROGRAMS / source), "-I", str(PROGRAMS), "-o",
                    str(exe)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_sees_struct_assignments_and_initialisations(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["copies.c"], types=["obj"], entry=["assign", "elems", "unseen"],
              flags=(opt, "-g"))
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, "copies.c", "clang-19", opt)
    assert seqs(prof, "obj") == {
        (WHOLE_R, WHOLE_W, (1, 16, 1, W)): 2,                 # *dst = *src; dst->c = 'a'
        (WHOLE_R, WHOLE_W, (1, 0, 24, R), (2, 0, 24, W)): 1,  # g[i] = g[j]; x = g[i]; spare = x
        (WHOLE_R, WHOLE_W): 1,                                # dst[3] = *p only
    }
    assert prof.types["obj"].outside_objects == 0
    # The forms left alone are named, with their lines.
    assert "copies.c:36:5: struct copy not traced: an operand is not a plain lvalue" \
        in b.compile_stderr
    assert "copies.c:38:5: struct copy not traced: an operand has side effects" \
        in b.compile_stderr
    assert "copies.c:39:5: struct copy not traced" in b.compile_stderr


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_clang_sees_trivial_class_copies(tmp_path: Path, opt: str) -> None:
    b = build(tmp_path, ["copies.cc"], types=["obj"], entry=["assign", "inits"],
              compiler="clang++-19", cxx=True, flags=(opt, "-g"),
              config_extra='instrument = ["assign", "inits"]\n')
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, "copies.cc", "clang++-19", opt)
    assert seqs(prof, "obj") == {
        (WHOLE_R, WHOLE_W): 1,                                 # *dst = *src
        (WHOLE_R, (1, 0, 24, R), WHOLE_R): 1,                  # x = *src; y(g[3]); z{*src}
    }
    assert "copies.cc:19:5: struct copy not traced" in b.compile_stderr  # static_cast<obj&&>
    assert "copies.cc:35:5: struct copy not traced" in b.compile_stderr  # std::move(x)
    assert "copies.cc:20:" not in b.compile_stderr  # a user operator= is no struct copy


@needs_gcc
def test_gcc_units_are_not_rewritten_for_struct_copies(tmp_path: Path) -> None:
    # gcc's thread sanitizer sees the copies itself; a rewrite would count them twice.
    b = build(tmp_path, ["copies.c"], types=["obj"], entry=["assign"], compiler="gcc")
    prof = b.trace()
    assert "struct copy not traced" not in b.compile_stderr
    assert seqs(prof, "obj") == {((0, 0, 24, W), (1, 0, 24, R), (0, 16, 1, W)): 2}


@needs_clang
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("source", ["copy_forms.c", "copy_forms.cc"])
def test_struct_copy_rewrite_keeps_unusual_forms_working(tmp_path: Path, source: str,
                                                         opt: str) -> None:
    cxx = source.endswith(".cc")
    compiler = "clang++-19" if cxx else "clang-19"
    b = build(tmp_path, [source], types=["obj"], entry=["run"], compiler=compiler, cxx=cxx,
              flags=(opt, "-g"))
    prof = b.trace()
    assert b.run() == plain_output(tmp_path, source, compiler, opt)
    # run() copies whole objects through pointers, members and a lambda: some are seen.
    whole = [a for s in prof.types["obj"].sequences for a in s.accesses
             if (a.offset, a.size) == (0, 24)]
    assert any(a.mode == R for a in whole) and any(a.mode == W for a in whole)
