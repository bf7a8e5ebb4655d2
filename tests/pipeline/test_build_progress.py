"""issue 29: on a terminal, `cachefit build` shows live progress (units compiled so far,
the last line of the build log, elapsed time; in the layout step, the type and the stage
running) under each step's line; off a terminal its output is the plain lines of before
(tests/pipeline/test_build_pipeline.py)."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiled_helpers import private_cache

MAKEFILE = """prog: main.c other.c
\t$(CC) -O1 -c main.c -o main.o
\t$(CC) -O1 -c other.c -o other.o
\t$(CC) main.o other.o -o prog
"""


needs_make = pytest.mark.skipif(shutil.which("make") is None or shutil.which("cc") is None,
                                reason="needs make and cc")


def on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """`cachefit ARGS` with stderr on a pseudo-terminal: (exit code, what the terminal
    showed, stdout)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CACHEFIT_") and k not in ("NO_COLOR", "TTY_COMPATIBLE",
                                                          "FORCE_COLOR", "TTY_INTERACTIVE")}
    env.update(TERM="xterm", COLUMNS="200", CACHEFIT_CACHE_DIR=str(private_cache(cwd)))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cachefit.cli.main", *args], cwd=cwd,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:         # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    stdout = proc.communicate(timeout=30)[0].decode()
    return proc.returncode, shown.decode(errors="replace"), stdout


@needs_make
def test_build_on_a_terminal_shows_units_and_elapsed_time(tmp_path: Path) -> None:
    (tmp_path / "main.c").write_text(
        "struct item { char a; long b; char c; };\n"
        "long f(struct item *it) { return it->a + it->b + it->c; }\n"
        "int main(void) { struct item i = {1, 2, 3}; return (int)f(&i) - 6; }\n")
    (tmp_path / "other.c").write_text("int other(void) { return 0; }\n")
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "cachefit.toml").write_text(
        '[build]\ncommand = "make"\nworkload = "./prog"\n\n'
        '[trace]\ntypes = ["item"]\nentry = ["f"]\n')
    code, text, stdout = on_a_terminal(["build", "--step", "profile"], tmp_path)
    assert code == 0, text
    assert "| profile build |" in stdout                  # the summary, as before
    live = re.findall(r"\[1/1\] profile build: (\d+) units? compiled, (\d+\.\d) s", text)
    assert live, text
    assert int(live[-1][0]) == 2                          # main.c and other.c
    assert "cachefit: [1/1] profile build: done in" in text
    assert "\x1b[" in text                                # redrawn in place


@needs_make
def test_layout_step_on_a_terminal_shows_each_type_and_its_stage(tmp_path: Path) -> None:
    """The layout step's live line names the type being laid out (of how many) and the
    stage running: finding it, scanning the units, optimizing, rewriting."""
    (tmp_path / "main.c").write_text(
        "struct item { char a; long b; char c; };\n"
        "struct pair { char x; double y; char z; };\n"
        "long f(struct item *it, struct pair *p) { return it->a + it->c + p->x + p->z; }\n"
        "int main(void) { struct item i = {.a = 1, .b = 2, .c = 3};\n"
        "  struct pair q = {.x = 1, .y = 2, .z = 3}; return (int)f(&i, &q) - 8; }\n")
    (tmp_path / "other.c").write_text("int other(void) { return 0; }\n")
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "cachefit.toml").write_text(
        '[build]\ncommand = "make"\nworkload = "./prog"\n\n'
        '[trace]\ntypes = ["item", "pair"]\nentry = ["f"]\n')
    code, text, _ = on_a_terminal(["build", "--step", "profile", "--step", "trace",
                                   "--step", "layout"], tmp_path)
    assert code == 0, text
    live = re.findall(r"\[3/3\] reorder and layout plan: (\w+) \(type (\d) of 2\): "
                      r"([a-z][^(\r\n\x1b]*?) \((\d+\.\d) s, (\d+\.\d) s in all\)", text)
    stages = {(name, n, what) for name, n, what, _, _ in live}
    for name, n in (("item", "1"), ("pair", "2")):
        assert (name, n, f"finding {name} in 2 units") in stages, text
        assert (name, n, "scanning 2 units") in stages, text
        assert (name, n, "optimizing") in stages, text
    order = [name for name, *_ in live]
    assert order.index("pair") > max(i for i, n in enumerate(order) if n == "item")
    assert "cachefit: [3/3] reorder and layout plan: done in" in text
