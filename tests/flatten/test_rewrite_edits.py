"""The shared edit list: non-overlapping replacements applied at once, atomic writes, diffs
that `git apply` accepts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cachefit.edits import (
    Edit,
    EditConflict,
    EditList,
    apply_to_slice,
    drop_contained,
    unified_diff,
    write_all_atomic,
    write_atomic,
)
from cachefit.errors import UserError


def test_edits_apply_at_once_in_any_order() -> None:
    el = EditList()
    el.replace("f", 6, 11, "there")
    el.insert("f", 0, ">> ")
    el.delete("f", 5, 6)
    assert el.apply({"f": b"hello world"}) == {"f": b">> hellothere"}


def test_insertions_at_one_offset_keep_their_order_and_precede_a_replacement() -> None:
    el = EditList()
    el.insert("f", 2, "a")
    el.replace("f", 2, 3, "X")
    el.insert("f", 2, "b")
    assert el.apply({"f": b"01234"}) == {"f": b"01abX34"}


def test_identical_edits_count_once() -> None:
    el = EditList([Edit("f", 1, 2, "Z"), Edit("f", 1, 2, "Z")])
    assert el.apply({"f": b"abc"}) == {"f": b"aZc"}


def test_overlapping_edits_are_a_conflict() -> None:
    el = EditList([Edit("f", 0, 3, "x"), Edit("f", 2, 4, "y")])
    with pytest.raises(EditConflict):
        el.apply({"f": b"abcdef"})
    el = EditList([Edit("f", 0, 3, "x"), Edit("f", 1, 1, "y")])
    with pytest.raises(EditConflict):
        el.apply({"f": b"abcdef"})


def test_outer_edits_subsume_inner_ones() -> None:
    inner = Edit("f", 2, 3, "Q")
    outer = Edit("f", 1, 5, "")
    boundary = Edit("f", 5, 5, "!")
    assert drop_contained([inner, outer, boundary]) == [outer, boundary]


def test_apply_to_slice_copies_with_local_edits() -> None:
    data = b"int base::f() { return base::x; }"
    edits = [Edit("f", 4, 8, "flat"), Edit("f", 23, 27, "flat"), Edit("f", 0, 3, "long")]
    assert apply_to_slice(data, 4, len(data), edits) == "flat::f() { return flat::x; }"
    with pytest.raises(EditConflict):
        apply_to_slice(data, 5, 20, [Edit("f", 4, 8, "flat")])


def test_write_atomic_keeps_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    p = tmp_path / "a.h"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_atomic(str(p), b"new")
    assert p.read_text() == "new"
    assert (p.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["a.h"]
    write_all_atomic({str(tmp_path / "b.h"): b"1", str(p): b"2"})
    assert (tmp_path / "b.h").read_text() == "1" and p.read_text() == "2"
    assert sorted(os.listdir(tmp_path)) == ["a.h", "b.h"]


def test_unified_diff_applies_with_git_even_without_final_newline(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"one\ntwo\nthree")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    new = b"one\n2\nthree"
    patch = unified_diff(b"one\ntwo\nthree", new, "x.txt")
    assert patch.startswith("--- a/x.txt\n+++ b/x.txt\n")
    assert "\\ No newline at end of file" in patch
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "x.txt").read_bytes() == new


def test_write_atomic_follows_a_symbolic_link(tmp_path: Path) -> None:
    real = tmp_path / "include" / "t.h"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "t.h"
    link.symlink_to(real)
    write_atomic(str(link), b"new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(os.listdir(real.parent)) == ["t.h"]


def test_new_files_get_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_all_atomic({str(tmp_path / "n.h"): b"x"})
    finally:
        os.umask(old)
    assert ((tmp_path / "n.h").stat().st_mode & 0o777) == 0o640


@pytest.mark.parametrize("bad", ["missing/dir/out.h", "."])
def test_unwritable_paths_are_user_errors_and_nothing_is_written(tmp_path: Path,
                                                                 bad: str) -> None:
    src = tmp_path / "a.h"
    src.write_text("old")
    with pytest.raises(UserError) as err:
        write_all_atomic({str(src): b"new", str(tmp_path / bad): b"x"})
    assert "cannot write" in err.value.what
    assert src.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["a.h"]


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    write_all_atomic({"/dev/null": b"x", str(tmp_path / "f"): b"y"})
    assert (tmp_path / "f").read_text() == "y"
