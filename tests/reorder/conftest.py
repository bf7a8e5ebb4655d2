"""Fixtures for the `cachefit reorder` tests (helpers are in reorder_helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachefit.cli import main as cli_main
from cachefit.reorder import scan_cache


@pytest.fixture(scope="session")
def _scan_cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scan-cache")


@pytest.fixture(autouse=True)
def _session_scan_cache(monkeypatch: pytest.MonkeyPatch, _scan_cache_root: Path) -> None:
    """The scan cache of these tests lives in one directory per test session, not in the
    user's cache (the rest of the cache directory, e.g. the native solver, is shared)."""
    monkeypatch.setattr(scan_cache, "default_root", lambda: _scan_cache_root)


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
