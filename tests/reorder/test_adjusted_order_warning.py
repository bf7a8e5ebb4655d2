"""`reorder --order` says why it changed the given order (issue 29, case 13): a record
with a flexible array member but no bit-fields was told "adjusted so that fields sharing a
bit-field storage unit stay together"."""

from __future__ import annotations

from pathlib import Path


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: the order was")]


def test_flexible_array_member_moved_last_is_named(tmp_path: Path, cachefit) -> None:
    src = tmp_path / "fam.c"
    src.write_text("struct fam { int n; char tag; long x; short s; long data[]; };\n")
    code, out, err = cachefit("reorder", "fam", src, "--order", "x,n,data,s,tag", "--diff")
    assert code == 0, err
    assert _warnings(err) == ["warning: the order was adjusted so that the flexible array "
                              "member data stays last: x, n, s, tag, data"]
    assert "+struct fam { long x; int n; short s; char tag; long data[]; };" in out


def test_bit_fields_and_flexible_array_are_both_named(tmp_path: Path, cachefit) -> None:
    src = tmp_path / "bits.c"
    src.write_text("struct bits { char c; unsigned a : 3; unsigned b : 5; long x;\n"
                   "  long data[]; };\n")
    code, _, err = cachefit("reorder", "bits", src, "--order", "a,x,data,c,b", "--diff")
    assert code == 0, err
    (line,) = _warnings(err)
    assert line.startswith("warning: the order was adjusted so that the flexible array "
                           "member data stays last and fields sharing a bit-field storage "
                           "unit stay together: "), line
