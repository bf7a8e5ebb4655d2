"""Issue 29, case 4: Ctrl-C at any moment of a command's start exits 130, no traceback.

The console scripts are run as installed; PYTHONPROFILEIMPORTTIME tells when the
interpreter has started and imported `cachefit.cli` (before that, Python itself prints
the traceback, which no code of cachefit can prevent), and SIGINT follows after a delay
that falls in the imports of the command modules, or in the command's own work.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cachefit.cli import main as cli_main

BIN = Path(sys.executable).parent
DELAYS = (0.0, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45)


def interrupted(cmd: list[str], cwd: Path, delay: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    env.update(PYTHONPROFILEIMPORTTIME="1", CACHEFIT_CACHE_DIR=str(cwd / ".cache"))
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    head = []
    for line in proc.stderr:
        head.append(line)
        if re.search(r"\|\s*cachefit\.cli$", line):
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "".join(head) + err)


def no_traceback(proc: subprocess.CompletedProcess[str], finished: int) -> None:
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert not any("Traceback" in e or "KeyboardInterrupt" in e or "Exception ignored" in e
                   for e in errors), "\n".join(errors)
    assert proc.returncode in (130, finished), (proc.returncode, "\n".join(errors))


@pytest.mark.parametrize("delay", DELAYS)
def test_interrupt_while_cachefit_starts(tmp_path: Path, delay: float) -> None:
    proc = interrupted([str(BIN / "cachefit"), "show", "rec", "missing.h"], tmp_path, delay)
    no_traceback(proc, finished=2)


@pytest.mark.parametrize("delay", DELAYS[::2])
def test_interrupt_while_compiler_wrapper_starts(tmp_path: Path, delay: float) -> None:
    (tmp_path / "cachefit.toml").write_text('[build]\ncc = "sleep"\n')
    proc = interrupted([str(BIN / "cachefit-cc"), "5"], tmp_path, delay)
    no_traceback(proc, finished=0)
    assert proc.returncode == 130


def test_interrupt_in_an_import_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def interrupt(name: str, package: str | None = None) -> object:
        if name == "cachefit.cli.show_cmd":
            raise KeyboardInterrupt
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", interrupt)
    assert cli_main.main(["show", "rec", "missing.h"]) == 130


def test_interrupt_turned_into_import_error_is_exit_130(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An extension module's init interrupted: ortools raises ImportError from it."""
    real = importlib.import_module

    def interrupt(name: str, package: str | None = None) -> object:
        if name == "cachefit.cli.show_cmd":
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise ImportError("initialization failed") from exc
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", interrupt)
    assert cli_main.main(["show", "rec", "missing.h"]) == 130

    def broken(name: str, package: str | None = None) -> object:
        raise ImportError("broken")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ImportError, match="broken"):     # other import errors stay errors
        cli_main.main(["show", "rec", "missing.h"])
