"""Fixtures for the `cachefit reorder` tests (helpers are in reorder_helpers)."""

from __future__ import annotations

import pytest

from cachefit.cli import main as cli_main


@pytest.fixture()
def cachefit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run `cachefit ARGS` in-process; returns (exit code, stdout, stderr).

    Only the reorder command is registered, so commands being written in parallel cannot
    break these tests; the dispatcher itself is the real one.
    """
    monkeypatch.setattr(cli_main, "COMMANDS", ["cachefit.cli.reorder_cmd"])

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli_main.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
