"""The user's cachefit cache directory and files built once into it.

Compiled helpers (the tracing runtime, its inlined bitcode, the layout solver's native
search) are built on demand into `cache_dir()`, under a name derived from their sources,
so that a second use, or a parallel one, finds them. A command that must go on when the
cache directory cannot be written (read-only, full, not a directory) passes
`CacheWrites`: the helper is then built in the command's own temporary directory, and
the command warns once (`report_unwritable`). Under `cachefit build`, whose build command
runs many compiler wrappers (`make -j`), NOTICE_ENV names a file where the first wrapper
records that warning instead, and the pipeline says it once for the whole build. This
module only names and publishes cache files; what goes into them is the caller's job.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cachefit.atomic_files import copy_atomic
from cachefit.scratch import scratch_directory


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """CACHEFIT_CACHE_DIR, else $XDG_CACHE_HOME/cachefit, else ~/.cache/cachefit (from
    `env`, default the process's environment)."""
    env = os.environ if env is None else env
    named = env.get("CACHEFIT_CACHE_DIR")
    if named:
        return Path(named)
    xdg = env.get("XDG_CACHE_HOME")
    return Path(xdg) / "cachefit" if xdg else Path.home() / ".cache" / "cachefit"


def failure_reason(directory: Path, exc: OSError) -> str:
    """Why writing in the cache `directory` failed: the system's reason and the file."""
    why = exc.strerror or str(exc)
    if exc.filename and str(exc.filename) != str(directory):
        why += f": {exc.filename}"
    return why


NOTICE_ENV = "CACHEFIT_CACHE_NOTICE"
"""Set by `cachefit build` for its build commands: the file where the compiler wrappers
record that the cache cannot be written (the first one's warning; the others add
nothing), which the pipeline then says once, instead of once per wrapper process."""


def unwritable_warning(directory: Path, exc: OSError, who: str = "this command") -> str:
    """The one warning of a command (`who`) that goes on without the cache in
    `directory`."""
    return (f"the cache directory {directory} cannot be written "
            f"({failure_reason(directory, exc)}); {who} goes on without the cache "
            "(set CACHEFIT_CACHE_DIR to a directory you can write)")


def report_unwritable(warnings: list[str], directory: Path, exc: OSError,
                      env: Mapping[str, str] | None = None) -> None:
    """Say once that the cache `directory` cannot be written: in `warnings`, or, when
    `env` (default: the process's) names a NOTICE_ENV file, in that file if no process
    of the build has written it yet. A notice file that cannot be written either leaves
    the warning in `warnings`."""
    notice = (os.environ if env is None else env).get(NOTICE_ENV)
    if notice:
        text = unwritable_warning(directory, exc, "the build")
        try:
            fd = os.open(notice, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return                      # said by another process of this build
        except OSError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(text + "\n")
            return
    warnings.append(unwritable_warning(directory, exc))


@dataclass
class CacheWrites:
    """One command's use of the cache directory `root`: after the first write that fails
    (said once, `report_unwritable`), helpers are built in `scratch`, the command's own
    temporary directory, and the cache is not tried again."""

    root: Path
    warnings: list[str]
    scratch: Path
    failed: bool = False
    env: Mapping[str, str] | None = None    # for NOTICE_ENV; default: the process's

    def failure(self, exc: OSError) -> None:
        if not self.failed:
            self.failed = True
            report_unwritable(self.warnings, self.root, exc, self.env)

    def build(self, name: str, make: Callable[[Path], None]) -> Path:
        """`make` a file called `name` in a fresh directory in `scratch`."""
        built = Path(tempfile.mkdtemp(dir=self.scratch)) / name
        make(built)
        return built


def build_cached(target: Path, make: Callable[[Path], None],
                 writes: CacheWrites | None = None) -> Path:
    """`target` (a file in the cache), made once: unless it exists, `make(tmp)` writes it
    as `tmp` in a fresh temporary directory, and `tmp` is renamed (or copied) to `target`.
    A lock on `target`'s directory makes parallel builds wait for the first one.
    Without `writes`, an `OSError` of the cache directory passes through; with it, the
    file is built in `writes.scratch` and returned from there (see `CacheWrites`)."""
    if target.is_file():
        return target
    if writes is not None and writes.failed:
        return writes.build(target.name, make)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = open(target.parent / ".lock", "w")   # noqa: SIM115 - closed below
    except OSError as exc:
        if writes is None:
            raise
        writes.failure(exc)
        return writes.build(target.name, make)
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        if writes is None:
            with scratch_directory(".build-", target.parent) as tmp:
                built = Path(tmp) / target.name
                make(built)
                os.replace(built, target)
            return target
        # Built outside the cache, so that a full cache directory fails in the copy
        # (an OSError), not in the compiler writing its output.
        built = writes.build(target.name, make)
        try:
            copy_atomic(built, target)
        except OSError as exc:
            writes.failure(exc)
            return built
    return target
