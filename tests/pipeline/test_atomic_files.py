"""cachefit.atomic_files: whole files or none, temporary files removed on failure, and the
user-facing variant's error naming the file."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachefit.atomic_files import (
    copy_atomic,
    is_special_file,
    new_file_mode,
    save_output,
    write_bytes_atomic,
)
from cachefit.edits import write_atomic
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


def _read_fifo(path: Path, out: list[bytes]) -> threading.Thread:
    def run() -> None:
        with open(path, "rb") as fh:
            out.append(fh.read())
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("writer", ["save_output", "write_bytes_atomic", "copy_atomic",
                                    "edits.write_atomic"])
def test_a_fifo_is_written_in_place_not_replaced(tmp_path: Path, writer: str) -> None:
    """Renaming a temporary file over a special file would replace it (as root, /dev/null
    became a regular file for the whole machine): special files are written in place."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    data = b"profile bytes\n"
    if writer == "save_output":
        save_output(fifo, data)
    elif writer == "write_bytes_atomic":
        write_bytes_atomic(fifo, data)
    elif writer == "copy_atomic":
        src = tmp_path / "src"
        src.write_bytes(data)
        copy_atomic(src, fifo)
    else:
        write_atomic(str(fifo), data)
    reader.join(timeout=10)
    assert got == [data]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["pipe"] + (["src"] if writer == "copy_atomic" else []))


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_null_device_stays_a_device(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    save_output(null, b"x" * 100)
    write_atomic(str(null), b"y")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert is_special_file(null) and not is_special_file(tmp_path)


@pytest.fixture(params=[0o022, 0o077], ids=["umask022", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


@pytest.mark.parametrize("writer", ["save_output", "write_bytes_atomic", "copy_atomic",
                                    "edits.write_atomic"])
def test_new_files_follow_the_umask(tmp_path: Path, umask: int, writer: str) -> None:
    """Issue 29, case 8: profiles, plans, reports and cache hits were 0600 whatever the
    umask (mkstemp), where `open()` and a fresh compile give 0666 less the umask; also
    when the file replaces one of other bits."""
    src = tmp_path / "src"
    src.write_bytes(b"data")
    for target in (tmp_path / "new", tmp_path / "old"):
        if target.name == "old":
            target.write_bytes(b"x")
            target.chmod(0o600 if umask == 0o022 else 0o644)
        if writer == "save_output":
            save_output(target, b"data")
        elif writer == "write_bytes_atomic":
            write_bytes_atomic(target, b"data")
        elif writer == "copy_atomic":
            copy_atomic(src, target)
        else:
            write_atomic(str(target), b"data")
        mode = stat.S_IMODE(target.stat().st_mode)
        if writer == "edits.write_atomic" and target.name == "old":
            assert mode == (0o600 if umask == 0o022 else 0o644)   # an edited source keeps its bits
        else:
            assert mode == 0o666 & ~umask, (target.name, oct(mode))
    assert new_file_mode() == 0o666 & ~umask
