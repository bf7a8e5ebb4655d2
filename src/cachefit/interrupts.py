"""Ctrl-C stops every command, at any moment, as a `KeyboardInterrupt` nothing swallows.

Python raises `KeyboardInterrupt` wherever the main thread happens to be when SIGINT is
handled, and some places do not let it through:

* libclang calls back into Python through ctypes (the visitor of `Cursor.get_children`,
  hence `walk_preorder`, and of `Type.get_fields`). An exception raised in a ctypes
  callback is printed ("Exception ignored on calling ctypes callback function") and
  dropped, and libclang takes the callback's missing answer for "stop visiting": the
  command carried on with a truncated list of children, wrote its file and exited 0.
* Raised in the argument conversion of a libclang call (`from_param`, Python code of
  clang.cindex), it becomes a `ctypes.ArgumentError` (exit 1 with a traceback).
* Raised in a finaliser (`__del__`, e.g. a translation unit's) or a weakref callback
  (importlib's module locks, while the command modules are imported), it is printed
  ("Exception ignored in ...") and dropped.

`install()` (called by `cachefit.cli.main.main` for every command) replaces Python's SIGINT
handler by `_on_sigint`, which raises `KeyboardInterrupt` as Python's does, except when a
frame of clang.cindex or a `__del__` is on the stack. There it only records the interrupt
and watches the calls and returns of Python code (`sys.setprofile`) until the stack has
left them; the interrupt is raised there, in the code that called libclang, as the
libclang function returns to it. Whatever is swallowed all the same (a weakref callback,
a finaliser written in C calling Python) reaches `sys.unraisablehook`: `install()` puts a
hook there that takes a `KeyboardInterrupt` back the same way instead of printing it.
While libclang runs C code (a parse), Python handles no signal at all; the interrupt waits
for the parse to end, as it always did. (Asking for the signal again from the handler,
with `signal.raise_signal` or `_thread.interrupt_main`, would run the handler again from
inside itself, without end.)

`held()` is for code that must not stop halfway (the renames of several files written
together, a temporary file's creation before its name is known): an interrupt inside the
block is raised when the outermost block ends. Without `install()` (cachefit used as a
library), `held()` holds nothing and Python's own handler stays.

This module prints nothing and decides no exit codes (the CLI exits 130).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["held", "install", "installed", "uninstall"]

_LIBCLANG_MODULES = frozenset({"clang.cindex"})
_FINALISERS = frozenset({"__del__"})

_depth = 0           # nesting of held() blocks
_pending = False     # an interrupt waits for a held() block or libclang to end
_installed = False
_previous_hook: Callable[[Any], object] | None = None


def installed() -> bool:
    """Whether `install()` is in effect (so `held()` holds interrupts)."""
    return _installed


def install(replacing: Callable[..., object] | None = None) -> None:
    """Handle SIGINT with `_on_sigint` in place of Python's own handler (or `replacing`),
    and take swallowed interrupts back from `sys.unraisablehook`. When SIGINT is ignored
    (`nohup`, a background job of a non-interactive shell) or handled by someone else,
    nothing changes."""
    global _installed, _pending, _previous_hook
    current = signal.getsignal(signal.SIGINT)
    if _installed or not (current is signal.default_int_handler
                          or (replacing is not None and current is replacing)):
        return
    _pending = False
    _previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable
    _installed = True
    signal.signal(signal.SIGINT, _on_sigint)


def uninstall(handler: Any = signal.default_int_handler) -> None:
    """Put back Python's unraisable hook, and `handler` (Python's own by default; SIG_IGN
    for a process about to exit) for SIGINT."""
    global _installed, _pending
    if not _installed:
        return
    signal.signal(signal.SIGINT, handler)
    if sys.unraisablehook is _unraisable and _previous_hook is not None:
        sys.unraisablehook = _previous_hook
    if sys.getprofile() is _after_unsafe_code:
        sys.setprofile(None)
    _installed = False
    _pending = False


def _inside_unsafe_code(frame: FrameType | None) -> bool:
    """Whether `frame` or a caller is libclang's Python binding, a finaliser or the
    unraisable hook."""
    while frame is not None:
        if (frame.f_globals.get("__name__") in _LIBCLANG_MODULES
                or frame.f_code.co_name in _FINALISERS or frame.f_code is _HOOK_CODE):
            return True
        frame = frame.f_back
    return False


def _raise_later() -> None:
    """Raise the interrupt at the next call or return of Python code outside libclang
    and finalisers (`_after_unsafe_code`)."""
    global _pending
    _pending = True
    if sys.getprofile() is None:
        sys.setprofile(_after_unsafe_code)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _depth:
        _pending = True          # held(): raised when the outermost block ends
        return
    if _inside_unsafe_code(frame) and sys.getprofile() in (None, _after_unsafe_code):
        _raise_later()
        return
    _pending = False
    raise KeyboardInterrupt


def _after_unsafe_code(frame: FrameType, event: str, arg: object) -> None:
    """The profile function while an interrupt waits: raises it at the first call, return
    or C call outside libclang and finalisers (a frame that returns has left them when
    its caller has), unless a held() block has started since (it raises at its end)."""
    global _pending
    if event == "return":
        # a finaliser or the hook returns to the C code that swallows exceptions
        if frame.f_code.co_name in _FINALISERS or frame.f_code is _HOOK_CODE:
            return
        frame = frame.f_back
    if _inside_unsafe_code(frame):
        return
    sys.setprofile(None)
    if _pending and not _depth:
        _pending = False
        raise KeyboardInterrupt


def _unraisable(unraisable: Any) -> None:
    """`sys.unraisablehook`: an interrupt swallowed where exceptions cannot propagate is
    raised again soon after (`_raise_later`, or at the end of a held() block); anything
    else goes to the previous hook (which prints it)."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _installed:
        _raise_later()
        return
    if _previous_hook is not None:
        _previous_hook(unraisable)


_HOOK_CODE = _unraisable.__code__


@contextmanager
def held() -> Iterator[None]:
    """Run the block to its end even when interrupted; the interrupt is raised after it
    (after the outermost of nested blocks). An exception from the block goes first; the
    interrupt then waits for the end of the next block, or is lost with the command."""
    global _depth, _pending
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
    if _depth == 0 and _pending and _installed:
        _pending = False
        if sys.getprofile() is _after_unsafe_code:
            sys.setprofile(None)
        raise KeyboardInterrupt
