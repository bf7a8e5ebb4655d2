"""Flexible array members (`T x[]`, gcc's `T x[0]`) read from DWARF: size 0, last, and
spelled `[]`/`[0]` (the mark cachefit.layout.problem keeps last), not a 16 GiB array.

gcc writes the upper bound of `T x[0]` as -1 of the index type; with -m32 and DWARF 5 it is
`DW_FORM_implicit_const 4294967295`, which was read as 2**32 elements (issue 8: Pistachio's
`tcb_t::kernel_stack`). The probes are built with gcc 12 and clang-19, C and C++, -m64 and (when
gcc-multilib is installed) -m32, DWARF 4 and 5; each probe prints the compiler's sizeof and
offsetof, which the DWARF reading must match.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_records import read_record
from cachefit.layout.problem import flexible_array

PROBE = r"""
#include <stddef.h>
#include <stdio.h>
typedef unsigned long word_t;
struct fam_open { int n; char tag; word_t data[]; };
struct fam_zero { short id; char name[12]; word_t big[3][5]; word_t stack[0]; };
#ifdef __cplusplus
class tcb_like { public: word_t a; tcb_like *next; char pad[200]; word_t kernel_stack[0]; };
#else
struct tcb_like { word_t a; struct tcb_like *next; char pad[200]; word_t kernel_stack[0]; };
#endif
/* several zero-length arrays share one abbreviation: gcc -gdwarf-5 then writes their bound
   once, as DW_FORM_implicit_const (4294967295 with -m32) */
struct z1 { int n; short s[0]; }; struct z2 { int n; char c[0]; }; struct z3 { int n; int i[0]; };
struct fam_open o; struct fam_zero z; struct z1 a1; struct z2 a2; struct z3 a3;
#ifdef __cplusplus
tcb_like t;
#else
struct tcb_like t;
#endif
#define SHOW(T, last) printf("%s %zu %zu\n", #T, sizeof(T), offsetof(T, last))
int main(void) {
  SHOW(struct fam_open, data);
  SHOW(struct fam_zero, stack);
#ifdef __cplusplus
  SHOW(tcb_like, kernel_stack);
#else
  SHOW(struct tcb_like, kernel_stack);
#endif
  return 0;
}
"""

COMPILERS = {("gcc", "c"): "gcc", ("gcc", "cxx"): "g++",
             ("clang", "c"): "clang-19", ("clang", "cxx"): "clang++-19"}


def _m32_works(tmp: Path) -> bool:
    src = tmp / "m32.c"
    src.write_text("int main(void) { return 0; }\n")
    proc = subprocess.run(["gcc", "-m32", str(src), "-o", str(tmp / "m32")],
                          capture_output=True, check=False)
    return proc.returncode == 0


@pytest.fixture(scope="module")
def m32(tmp_path_factory: pytest.TempPathFactory) -> bool:
    return _m32_works(tmp_path_factory.mktemp("m32"))


@pytest.mark.parametrize("dwarf", ["-gdwarf-4", "-gdwarf-5"])
@pytest.mark.parametrize("arch", ["-m32", "-m64"])
@pytest.mark.parametrize(("compiler", "lang"), sorted(COMPILERS))
def test_flexible_array_member(compiler: str, lang: str, arch: str, dwarf: str, m32: bool,
                               tmp_path: Path) -> None:
    tool = COMPILERS[(compiler, lang)]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    if arch == "-m32" and not m32:
        pytest.skip("gcc-multilib is not installed (no -m32 runtime)")
    src = tmp_path / ("probe.c" if lang == "c" else "probe.cc")
    src.write_text(PROBE)
    exe = tmp_path / "probe"
    subprocess.run([tool, arch, dwarf, "-O0", "-w", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    truth = {}
    for line in out.splitlines():
        *name, size, offset = line.split()
        truth[name[-1]] = (int(size), int(offset))
    assert set(truth) == {"fam_open", "fam_zero", "tcb_like"}
    if (compiler, lang, arch, dwarf) == ("gcc", "cxx", "-m32", "-gdwarf-5") and \
            shutil.which("llvm-dwarfdump-19"):
        dump = subprocess.run(["llvm-dwarfdump-19", "-v", "--debug-info", str(exe)],
                              capture_output=True, text=True, check=True).stdout
        assert "DW_AT_upper_bound [DW_FORM_implicit_const]\t(4294967295)" in dump
    for name, (size, offset) in truth.items():
        rec = read_record(str(exe), name)
        assert rec.size == size, (name, rec.size)
        last = rec.fields[-1]
        assert (last.offset, last.size) == (offset, 0), (name, last)
        assert last.type.endswith(("[]", "[0]")), last.type
        assert flexible_array(rec) is last
    # real bounds are not mistaken for -1: a 12-byte array, a 3x5 array of words, 200 chars
    zero = read_record(str(exe), "fam_zero")
    by_name = {f.name: f for f in zero.fields}
    word = 4 if arch == "-m32" else 8
    assert (by_name["name"].size, by_name["name"].type) == (12, "char[12]")
    assert by_name["big"].size == 15 * word and by_name["big"].type.endswith("[3][5]")
    assert read_record(str(exe), "tcb_like").fields[2].size == 200
    for name in ("z1", "z2", "z3"):
        rec = read_record(str(exe), name)
        assert (rec.size, rec.fields[-1].size, rec.fields[-1].offset) == (4, 0, 4)
