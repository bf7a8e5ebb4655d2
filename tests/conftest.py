"""Fixtures of the whole suite: the session's directory of shared compiled helpers (see
compiled_helpers.py), one for all pytest-xdist workers of a run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from compiled_helpers import set_shared_root


@pytest.fixture(scope="session", autouse=True)
def _shared_compiled_helpers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Under pytest-xdist each worker's base temporary directory is a child of the run's,
    so the run's is the one the workers share."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / "compiled-helpers"
    root.mkdir(exist_ok=True)
    set_shared_root(root)
    yield
    set_shared_root(None)
