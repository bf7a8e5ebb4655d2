"""issue 29: on a terminal, `cachefit build` shows live progress (units compiled so far,
the last line of the build log, elapsed time) under each step's line; off a terminal its
output is the plain lines of before (tests/build/test_build_pipeline.py)."""

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


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("cc") is None,
                    reason="needs make and cc")
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
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CACHEFIT_") and k not in ("NO_COLOR", "TTY_COMPATIBLE",
                                                          "FORCE_COLOR", "TTY_INTERACTIVE")}
    env.update(TERM="xterm", COLUMNS="200", CACHEFIT_CACHE_DIR=str(private_cache(tmp_path)))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cachefit.cli.main", "build", "--step",
                             "profile"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave)
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
    text = shown.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "| profile build |" in stdout                  # the summary, as before
    live = re.findall(r"\[1/1\] profile build: (\d+) units? compiled, (\d+\.\d) s", text)
    assert live, text
    assert int(live[-1][0]) == 2                          # main.c and other.c
    assert "cachefit: [1/1] profile build: done in" in text
    assert "\x1b[" in text                                # redrawn in place
