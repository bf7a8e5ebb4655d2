"""Issue 29, case 5: an interrupt that lands where Python would swallow it (a libclang
callback through ctypes, the argument conversion of a libclang call, a finaliser, a weakref
callback) is raised as soon as the code is out of there (cachefit.interrupts), and held()
blocks end before it is raised.

The signal is raised with `signal.raise_signal`, which runs the handler at once, from inside
the callback that a patched method of clang.cindex puts on the stack."""

from __future__ import annotations

import gc
import signal
import weakref
from collections.abc import Iterator
from pathlib import Path

import clang.cindex as ci
import pytest

from cachefit import interrupts
from cachefit.frontend.clang_parse import parse_unit

SOURCE = "struct a { int x; }; struct b { int y; }; int f(void); int g(void); int h;\n"


@pytest.fixture
def installed() -> Iterator[None]:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    interrupts.install()
    assert interrupts.installed()
    try:
        yield
    finally:
        interrupts.uninstall()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.fixture
def unit(tmp_path: Path) -> ci.TranslationUnit:
    path = tmp_path / "unit.c"
    path.write_text(SOURCE)
    return parse_unit(str(path), [])


def test_interrupt_in_a_libclang_visitor_is_raised_after_the_visit(
        installed: None, unit: ci.TranslationUnit, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    expected = len(list(unit.cursor.get_children()))
    assert expected >= 5
    seen = []
    real_ne = ci.Cursor.__ne__

    def ne(self: ci.Cursor, other: object) -> bool:      # the visitor's `assert child != ...`
        seen.append(self.spelling)
        if len(seen) == 2:
            signal.raise_signal(signal.SIGINT)
        return bool(real_ne(self, other))

    monkeypatch.setattr(ci.Cursor, "__ne__", ne)
    with pytest.raises(KeyboardInterrupt):
        list(unit.cursor.get_children())
    # the whole visit ran (without the fix: 2 children, "Exception ignored on calling ctypes
    # callback function", and no KeyboardInterrupt at all)
    assert len(seen) == expected
    assert "Exception ignored" not in capsys.readouterr().err


def test_interrupt_in_walk_preorder_stops_the_walk(
        installed: None, unit: ci.TranslationUnit, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real_ne = ci.Cursor.__ne__

    def ne(self: ci.Cursor, other: object) -> bool:
        nonlocal calls
        calls += 1
        if calls == 3:
            signal.raise_signal(signal.SIGINT)
        return bool(real_ne(self, other))

    monkeypatch.setattr(ci.Cursor, "__ne__", ne)
    walked = []
    with pytest.raises(KeyboardInterrupt):
        for c in unit.cursor.walk_preorder():
            walked.append(c.kind)
    assert len(walked) < 20


class _InterruptedFile(ci.File):
    """A File whose conversion to a libclang argument (cindex's `from_param` reads
    `_as_parameter_`) is interrupted."""

    @property
    def _as_parameter_(self) -> object:
        signal.raise_signal(signal.SIGINT)
        return self.obj

    @_as_parameter_.setter
    def _as_parameter_(self, value: object) -> None:
        pass


def test_interrupt_in_a_libclang_argument_conversion_is_not_an_argument_error(
        installed: None, unit: ci.TranslationUnit) -> None:
    file = unit.get_file(unit.spelling)
    interrupted = _InterruptedFile(file.obj)
    with pytest.raises(KeyboardInterrupt):      # not ctypes.ArgumentError
        interrupted.name       # noqa: B018
    assert file.name.endswith("unit.c")


class _Finalised:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)
        self.done = True


def test_interrupt_in_a_finaliser_is_raised_after_it(
        installed: None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(KeyboardInterrupt):
        obj = _Finalised()
        del obj
        len("the next call")    # a profile event: a call outside the finaliser
    assert "Exception ignored" not in capsys.readouterr().err


def test_interrupt_swallowed_in_a_weakref_callback_is_raised_again(
        installed: None, capsys: pytest.CaptureFixture[str]) -> None:
    class Target:
        pass

    def callback(ref: object) -> None:
        raise KeyboardInterrupt      # what the handler raises in importlib's module locks

    target = Target()
    ref = weakref.ref(target, callback)
    with pytest.raises(KeyboardInterrupt):
        del target
        gc.collect()
        len("next call")
    assert ref() is None
    assert "Exception ignored" not in capsys.readouterr().err


def test_held_blocks_end_before_the_interrupt(installed: None) -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            signal.raise_signal(signal.SIGINT)
            steps.append(1)
            with interrupts.held():
                steps.append(2)
            steps.append(3)
        steps.append(4)
    assert steps == [1, 2, 3]
    with interrupts.held():              # nothing pending any more
        steps.append(5)
    assert steps == [1, 2, 3, 5]


def test_without_install_interrupts_are_pythons(unit: ci.TranslationUnit) -> None:
    assert not interrupts.installed()
    with pytest.raises(KeyboardInterrupt), interrupts.held():
        signal.raise_signal(signal.SIGINT)
    interrupts.uninstall()      # harmless when not installed


def test_ignored_sigint_stays_ignored() -> None:
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        interrupts.install()
        assert not interrupts.installed()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)
