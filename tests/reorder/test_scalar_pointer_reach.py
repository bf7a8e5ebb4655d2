"""A pointer to the record converted to a pointer to a scalar and indexed past its first
element (sweep 4, a reduction of the statistics-block idiom: `uint64_t *p = (uint64_t
*)&st; p[1]`, or a loop summing `p[i]`): cachefit kept only the first member first
("reads its first 8 bytes"), accepted `--order a,c,b,d`, and `p[1]` then read `c`. The
bytes such a pointer reaches are now those of its largest constant index, or the whole
record for a variable index or pointer arithmetic, through the converted pointer itself or
the local variable it initialises or is assigned to."""

from __future__ import annotations

from pathlib import Path

import pytest
from reorder_helpers import C_COMPILERS, analyse_rec_and_use, refused_order, reorder_and_run

REC = """\
#include <stdint.h>
struct st { uint64_t a; uint64_t b; uint64_t c; uint64_t d; };
"""

SECOND = """\
#include <stdio.h>
#include "rec.h"
int main(void) {
    struct st s = {.a = 1, .b = 2, .c = 3, .d = 4};
    uint64_t *p = (uint64_t *)&s;
    printf("%llu %llu\\n", (unsigned long long)p[0], (unsigned long long)p[1]);
    return 0;
}
"""


def _pins(tmp_path: Path, use: str) -> list[tuple[str, ...]]:
    a = analyse_rec_and_use(tmp_path, "st", REC, use)
    assert not a.refusals, a.refusals
    return [c.fields for c in a.constraints if c.kind in ("pin", "first")]


def test_a_constant_index_reaches_its_element(tmp_path: Path) -> None:
    assert _pins(tmp_path, SECOND) == [("a", "b")]


@pytest.mark.parametrize("body", [
    "uint64_t *p; p = (uint64_t *)s; unsigned long long t = 0;"
    " for (int i = 0; i < 4; i++) t += p[i]; return t;",
    "uint64_t *p = (uint64_t *)s; p++; return *p;",
    "uint64_t *p = (uint64_t *)s; p += 2; return *p;",
    "return *((uint64_t *)s + 3);",
    "return ((uint64_t *)s)[3];",
])
def test_a_variable_index_or_arithmetic_reaches_the_whole_record(tmp_path: Path,
                                                                  body: str) -> None:
    use = ('#include "rec.h"\nunsigned long long f(struct st *s);\n'
           f"unsigned long long f(struct st *s) {{ {body} }}\n")
    assert _pins(tmp_path, use) == [("a", "b", "c", "d")]


def test_a_plain_dereference_reads_the_first_member_only(tmp_path: Path) -> None:
    use = ('#include "rec.h"\nunsigned long long f(struct st *s);\n'
           "unsigned long long f(struct st *s) { return *(uint64_t *)s; }\n")
    assert _pins(tmp_path, use) == [("a",)]


def test_the_order_that_broke_is_refused(cachefit, tmp_path: Path) -> None:
    (tmp_path / "rec.h").write_text(REC)
    (tmp_path / "use.c").write_text(SECOND)
    err = refused_order(cachefit, tmp_path, "st", tmp_path / "rec.h", tmp_path / "use.c",
                        "--order", "a,c,b,d", "--", "-std=gnu11")
    assert "a, b keep their offsets" in err and "reads its first 16 bytes" in err, err


@pytest.mark.parametrize("compiler", C_COMPILERS)
def test_an_order_that_keeps_the_reach_runs_the_same(cachefit, tmp_path: Path,
                                                     compiler: str) -> None:
    (tmp_path / "rec.h").write_text(REC)
    (tmp_path / "use.c").write_text(SECOND)
    assert reorder_and_run(cachefit, tmp_path, "st", "a,b,d,c", compiler) == ["1", "2"]


BYTES = "struct bytes { unsigned char a; unsigned char b; unsigned char c; unsigned char d; };\n"


@pytest.mark.parametrize(("body", "pins"), [
    ("unsigned char *p = (unsigned char *)s; return p[1];", [("a", "b")]),
    ("return ((unsigned char *)s)[2];", [("a", "b", "c")]),
    ("unsigned char *p = (unsigned char *)s; int t = 0;"
     " for (int i = 0; i < 4; i++) t += p[i]; return t;", [("a", "b", "c", "d")]),
    ("return *(unsigned char *)s;", [("a",)]),
])
def test_a_byte_pointer_indexed_past_the_first_byte(tmp_path: Path, body: str,
                                                    pins: list[tuple[str, ...]]) -> None:
    """The same for `unsigned char *` (`p[1]` read b; `--order a,c,b,d` was accepted and it
    read c). Byte-pointer sums (`(char *)p + offsetof(T, m)`) stay the range analysis'."""
    use = ('#include "rec.h"\nint f(struct bytes *s);\n'
           f"int f(struct bytes *s) {{ {body} }}\n")
    a = analyse_rec_and_use(tmp_path, "bytes", BYTES, use)
    assert not a.refusals, a.refusals
    assert [c.fields for c in a.constraints if c.kind in ("pin", "first")] == pins
