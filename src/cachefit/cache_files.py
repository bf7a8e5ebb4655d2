"""The user's cachefit cache directory and files built once into it.

Compiled helpers (the tracing runtime, its inlined bitcode, the layout solver's native
search) are built on demand into `cache_dir()`, under a name derived from their sources,
so that a second use, or a parallel one, finds them. This module only names and
publishes cache files; what goes into them is the caller's job.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    """CACHEFIT_CACHE_DIR, else $XDG_CACHE_HOME/cachefit, else ~/.cache/cachefit."""
    env = os.environ.get("CACHEFIT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "cachefit" if xdg else Path.home() / ".cache" / "cachefit"


def build_cached(target: Path, make: Callable[[Path], None]) -> Path:
    """`target` (a file in the cache), made once: unless it exists, `make(tmp)` writes it
    as `tmp` in a fresh temporary directory beside it, and `tmp` is renamed to `target`.
    A lock on `target`'s directory makes parallel builds wait for the first one."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            built = Path(tmp) / target.name
            make(built)
            os.replace(built, target)
    return target
