"""Live progress on a terminal (rich), for `cachefit build` and `cachefit reorder`.

The stages never print; they call plain callables (the pipeline's `progress`, `watch` and
`stage`, the reorder analysis' and rewrite's `stage`). This module turns those calls into
output on stderr: on a terminal, a line updated in place (units compiled so far, the last
line of the step's log, the elapsed time; in the layout step, the type and its stage
running: "item (type 1 of 2): optimizing (0.8 s, 3.2 s in all)") that disappears when the
step ends; elsewhere (CI, pipes, tests) exactly the plain lines of before and nothing else.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

    from cachefit.pipeline.pipeline import StepFiles


def terminal_console() -> Console | None:
    """A rich console on stderr when stderr is a terminal that can redraw a line, else
    None (then nothing but the plain lines is printed)."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    console = Console(stderr=True)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    return console


def _last_line(path: Path, since: float) -> str:
    """The last non-empty line of `path` if it was written after `since`, else ''."""
    try:
        if path.stat().st_mtime < since:
            return ""
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 4096))
            tail = fh.read()
    except OSError:
        return ""
    for raw in reversed(tail.splitlines()):
        line = "".join(c if c.isprintable() else " " for c in
                       raw.decode("utf-8", errors="replace")).strip()
        if line:
            return line
    return ""


def _units_since(directory: Path, since: float) -> int:
    """The units the compiler wrapper kept in `directory` (one .json each) after `since`."""
    n = 0
    try:
        with os.scandir(directory) as entries:
            for e in entries:
                if e.name.endswith(".json") and not e.name.startswith("."):
                    try:
                        n += e.stat().st_mtime >= since
                    except OSError:
                        pass
    except OSError:
        return 0
    return n


def elapsed_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


class LiveLine:
    """One line redrawn in place while something runs; `show()` starts it with a function
    that gives its text, `close()` removes it. Plain lines are printed above it."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Live | None = None
        self.text: Callable[[], str] = str

    def show(self, text: Callable[[], str]) -> None:
        """Show `text()` (called at each redraw) in place of what the line showed."""
        self.text = text
        if self.live is not None:
            self.live.refresh()
            return
        from rich.live import Live
        from rich.text import Text

        def render() -> Text:
            return Text(self.text(), no_wrap=True, overflow="ellipsis", style="dim")

        self.live = Live(get_renderable=render, console=self.console, transient=True,
                         refresh_per_second=4, redirect_stdout=False, redirect_stderr=False)
        self.live.start(refresh=True)

    def close(self) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            live.stop()         # its last refresh shows the final figures, then it goes

    def print(self, line: str) -> None:
        self.close()
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


class BuildProgress:
    """`cachefit build`'s progress: `line` is the pipeline's `progress`, `watch` its
    `watch`, `stage` its `stage`. Use as a context manager so that an error removes the
    live line first."""

    def __init__(self, console: Console | None = None) -> None:
        self.live = LiveLine(console) if console is not None else None
        self.step_text: Callable[[], str] = str       # the running step's live text
        self.current = ""                             # the stage running in that step
        self.current_since = 0.0

    def line(self, text: str) -> None:
        if self.live is None:
            print(f"cachefit: {text}", file=sys.stderr, flush=True)
        else:
            self.live.print(f"cachefit: {text}")

    def watch(self, files: StepFiles) -> None:
        if self.live is None:
            return
        start = time.monotonic()
        since = time.time() - 1.0       # files older than the step are a previous run's
        # the output tree (OUT/profile/build.log, OUT/units/profile)
        root = str(files.units.parent.parent) + os.sep if files.units is not None else ""

        def text() -> str:
            parts = [f"  [{files.number}/{files.total}] {files.title}:"]
            if files.units is not None:
                n = _units_since(files.units, since)
                parts.append(f"{n} unit{'' if n == 1 else 's'} compiled,")
            parts.append(elapsed_text(time.monotonic() - start))
            last = _last_line(files.log, since) if files.log is not None else ""
            if last and root:       # the wrapper's long path as its name: `cc -c x.c`
                last = " ".join(os.path.basename(w) if w.startswith(root) else w
                                for w in last.split())
            if last:
                parts.append(f"| {last}")
            return " ".join(parts)

        def staged() -> str:
            if not self.current:
                return text()
            now = time.monotonic()
            return (f"  [{files.number}/{files.total}] {files.title}: {self.current} "
                    f"({elapsed_text(now - self.current_since)}, "
                    f"{elapsed_text(now - start)} in all)")

        self.current = ""
        self.live.show(staged)

    def stage(self, what: str) -> None:
        """The running step's stage starting (the layout step's type and stage), shown in
        place of its elapsed time alone until the next stage or step."""
        if self.live is None:
            return
        self.current, self.current_since = what, time.monotonic()
        if self.live.live is not None:
            self.live.live.refresh()

    def __enter__(self) -> BuildProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.live is not None:
            self.live.close()


class StageProgress:
    """`cachefit reorder`'s stages: on a terminal, the current stage and the elapsed time
    redrawn in place and removed at the end; elsewhere nothing."""

    def __init__(self, console: Console | None = None, what: str = "") -> None:
        self.live = LiveLine(console) if console is not None else None
        self.what = what
        self.start = time.monotonic()

    def stage(self, name: str) -> None:
        if self.live is None:
            return
        started = time.monotonic()

        def text() -> str:
            now = time.monotonic()
            return (f"cachefit: {self.what}{name} ({elapsed_text(now - started)}, "
                    f"{elapsed_text(now - self.start)} in all)")

        self.live.show(text)

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.live is not None:
            self.live.close()
