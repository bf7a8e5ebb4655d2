"""Private cachefit caches for the tests, with the compiled helpers shared by the whole run.

Tests that run cachefit in a subprocess give it a cache directory of its own
(CACHEFIT_CACHE_DIR=TMP/.cache), so that the object cache and the scan cache they look at
are theirs alone. The same directory also holds the helpers cachefit compiles on first use:
the tracing runtime (`runtime/`), its inline-check bitcode (`runtime-inline/`), the
native block search (`solver/`) and the check-coalescing pass plugin (`pass-plugin/`).
Those are named by a hash of their sources, compiler and flags and are built under a file
lock (cachefit.cache_files.build_cached), so one copy can
serve every test: `private_cache` links those four subdirectories to one directory of the
test session (shared by the pytest-xdist workers), and the first test that needs a helper
builds it there. tests/trace/test_runtime_cache.py checks the on-demand builds themselves,
in caches of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

SHARED_SUBDIRS = ("runtime", "runtime-inline", "solver", "pass-plugin")
"""The cache subdirectories that hold compiled helpers keyed by their inputs."""

_shared_root: Path | None = None


def set_shared_root(root: Path | None) -> None:
    """Where the session keeps the shared helpers (tests/conftest.py sets it; None: each
    private cache builds its own)."""
    global _shared_root
    _shared_root = root


def private_cache(tmp: Path) -> Path:
    """TMP/.cache, for CACHEFIT_CACHE_DIR: private but for the shared compiled helpers."""
    cache = tmp / ".cache"
    if _shared_root is None:
        return cache
    cache.mkdir(parents=True, exist_ok=True)
    for name in SHARED_SUBDIRS:
        link = cache / name
        if link.is_symlink() or link.exists():
            continue
        target = _shared_root / name
        target.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)
    return cache


def build_env(tmp: Path) -> dict[str, str]:
    """The environment of a `cachefit build` run in a test: this process's, without the
    variables that would put the compiler wrapper in a mode or point it at a project file,
    a plan or a trace directory, and with a private cache (`private_cache`)."""
    env = dict(os.environ)
    for key in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
                "CACHEFIT_TRACE_DIR", "CACHEFIT_LAYOUTS", "CACHEFIT_UNITS_DIR",
                "CACHEFIT_PROFILE_REORDER"):
        env.pop(key, None)
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp))
    return env
