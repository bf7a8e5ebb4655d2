"""cachefit.atomic_files: whole files or none, temporary files removed on failure, and the
user-facing variant's error naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachefit.atomic_files import copy_atomic, save_output, write_bytes_atomic
from cachefit.errors import UserError


def test_write_creates_directories_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.bin"
    write_bytes_atomic(target, b"one")
    write_bytes_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.bin"]


def test_copy(tmp_path: Path) -> None:
    (tmp_path / "src").write_bytes(b"\0payload")
    copy_atomic(tmp_path / "src", tmp_path / "out" / "dest")
    assert (tmp_path / "out" / "dest").read_bytes() == b"\0payload"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["dest"]


def test_failure_leaves_old_contents_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep"
    target.write_bytes(b"old")
    with pytest.raises(OSError):
        copy_atomic(tmp_path / "missing", target)
    with pytest.raises(TypeError):
        write_bytes_atomic(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep"]


def test_save_output_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "report.html"
    with pytest.raises(UserError) as info:
        save_output(missing, b"x")
    assert info.value.what == f"cannot write {missing}: No such file or directory"
    assert info.value.todo and "directory exists" in info.value.todo
    assert not missing.parent.exists()
    # A directory where the file should go: the rename fails, the temporary file goes.
    (tmp_path / "d").mkdir()
    with pytest.raises(UserError) as info:
        save_output(tmp_path / "d", b"x")
    assert info.value.what.startswith(f"cannot write {tmp_path / 'd'}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]
    save_output(tmp_path / "ok.txt", b"fine")
    assert (tmp_path / "ok.txt").read_bytes() == b"fine"
