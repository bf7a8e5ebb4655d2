"""Issue 29: an interrupted build left a `cachefit-opt-*` directory in TMPDIR (the fault
test, once in about 60 interrupted builds). `tempfile.TemporaryDirectory` leaks its
directory when Ctrl-C lands right after `mkdtemp` or during the `rmtree` of its cleanup;
`cachefit.scratch.scratch_directory` must not, with cachefit.interrupts installed as every
command has it. The signal is raised with `signal.raise_signal` (its handler runs at once)
from a patched `mkdtemp` / `rmtree`, at exactly those moments."""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cachefit import interrupts
from cachefit.scratch import scratch_directory


@pytest.fixture
def installed() -> Iterator[None]:
    interrupts.install()
    try:
        yield
    finally:
        interrupts.uninstall()


def _interrupting_rmtree(monkeypatch: pytest.MonkeyPatch) -> None:
    """rmtree removes one file, then Ctrl-C arrives, then it goes on."""
    real = shutil.rmtree

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        files = sorted(Path(path).iterdir())
        if files:
            files[0].unlink()
        signal.raise_signal(signal.SIGINT)
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)


def _fill(d: Path) -> None:
    for i in range(3):
        (d / f"f{i}").write_text("x")


def _left(base: Path) -> list[Path]:
    return list(base.iterdir())


def test_temporary_directory_leaks_when_the_cleanup_is_interrupted(
        installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: what the wrappers used (if this passes no more, the library fixed it)."""
    _interrupting_rmtree(monkeypatch)
    with pytest.raises(KeyboardInterrupt), tempfile.TemporaryDirectory(dir=tmp_path) as d:
        _fill(Path(d))
    assert _left(tmp_path)


def test_scratch_directory_is_removed_when_the_cleanup_is_interrupted(
        installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupting_rmtree(monkeypatch)
    with pytest.raises(KeyboardInterrupt), scratch_directory("t-", tmp_path) as d:
        _fill(d)
    assert _left(tmp_path) == []


def test_scratch_directory_is_removed_when_interrupted_as_it_is_made(
        installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real: Callable[..., str] = tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        made = real(*args, **kwargs)
        signal.raise_signal(signal.SIGINT)
        return made

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    ran = False
    with pytest.raises(KeyboardInterrupt), scratch_directory("t-", tmp_path):
        ran = True
    assert not ran
    assert _left(tmp_path) == []


def test_scratch_directory_is_removed_when_the_block_fails(tmp_path: Path) -> None:
    with pytest.raises(ValueError), scratch_directory("t-", tmp_path) as d:
        _fill(d)
        raise ValueError
    assert _left(tmp_path) == []
    with scratch_directory("t-", tmp_path) as d:
        assert d.is_dir() and d.name.startswith("t-") and d.parent == tmp_path
    assert _left(tmp_path) == []
