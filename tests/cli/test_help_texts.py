"""Every `--help` describes every option and positional argument (issue 29: "Every --help
lists every option and describes every positional argument").

Walks the parser `cachefit` builds (every command and sub-command) and checks that each
argument argparse shows has a help text; `--help` itself of each command runs and exits 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from cachefit.cli.main import build_parser


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    out: list[tuple[str, argparse.ArgumentParser]] = []
    todo = [("cachefit", build_parser())]
    while todo:
        name, parser = todo.pop()
        out.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {n}", p) for n, p in action.choices.items()]
    return out


PARSERS = _parsers()


def test_every_command_is_walked() -> None:
    names = {n for n, _ in PARSERS}
    for command in ("show", "flatten", "trace", "profile", "reorder", "build", "report",
                    "cache", "cc"):
        assert f"cachefit {command}" in names


@pytest.mark.parametrize(("name", "parser"), PARSERS, ids=[n for n, _ in PARSERS])
def test_every_argument_has_a_help_text(name: str, parser: argparse.ArgumentParser) -> None:
    missing = [a.dest for a in parser._actions
               if a.help != argparse.SUPPRESS and not a.help
               and not isinstance(a, argparse._SubParsersAction)]
    assert missing == [], f"{name}: no help text for {missing}"


@pytest.mark.parametrize("name", [n for n, _ in PARSERS if n.count(" ") == 1])
def test_help_runs(name: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "cachefit.cli.main", *name.split()[1:],
                           "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout.lower() or "cachefit" in proc.stdout
