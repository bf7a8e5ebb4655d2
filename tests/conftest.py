"""Suite-wide settings: the session's directory of shared compiled helpers (see
compiled_helpers.py), one for all pytest-xdist workers of a run, and how `make test`
spreads the tests over the workers (`--dist loadgroup`, see `pytest_xdist_make_scheduler`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from compiled_helpers import set_shared_root

WHOLE_MODULES = {
    "tests/pipeline/test_build_pipeline.py": "`built`: one `cachefit build` of examples/ipc",
    "tests/pipeline/test_variant_bench.py": "`measured`: pingpong variants run under valgrind",
    "tests/trace/test_trace_shared_globals.py": "`builds`: programs and libraries per compiler",
}
"""Modules whose tests share an expensive module-scoped fixture: each runs whole on one
pytest-xdist worker, so that the fixture is made once, not once per worker."""


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


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup`, with each of WHOLE_MODULES as one group. Every other test is a
    unit of its own, handed to whichever worker is free (the largest units go first).
    Grouping by `xdist_group` marks alone does not work with pytest 9.2 (pytest-xdist
    issue 1386: the group suffix it writes into the node id is lost), hence the table."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class WholeModules(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in WHOLE_MODULES else super()._split_scope(nodeid)

    return WholeModules(config, log)
