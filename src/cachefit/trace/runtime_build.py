"""Locate the tracing runtime (runtime/) and its static library, building it on demand.

Profile links need libcachefit_rt.a. The one `make -C runtime` produced is used when it
is newer than every runtime source; otherwise the sources are compiled with the given C
compiler into a cache directory keyed by a hash of the sources and the compiler, under a
file lock so parallel links do not race. It never edits the runtime sources.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from cachefit.cache_files import CacheWrites, build_cached, cache_dir
from cachefit.errors import ToolMissing, UserError

# DWARF 4: valgrind 3.19 (Debian 12) cannot read clang 19's default DWARF 5, and traced
# programs are compared with valgrind tools.
RUNTIME_CFLAGS = ["-std=c11", "-O2", "-gdwarf-4", "-fPIC", "-Wall", "-Wextra",
                  "-fno-strict-aliasing", "-fno-sanitize=all", "-ftls-model=initial-exec"]
LIB_NAME = "libcachefit_rt.a"


def runtime_dir() -> Path:
    """The runtime source tree (CACHEFIT_RUNTIME_DIR or the repository's runtime/)."""
    env = os.environ.get("CACHEFIT_RUNTIME_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "runtime"


def include_dir() -> Path:
    return runtime_dir() / "include"


def _sources() -> list[Path]:
    src = runtime_dir() / "src"
    files = sorted(src.glob("*.c")) + sorted(src.glob("*.h"))
    if not any(f.suffix == ".c" for f in files):
        raise UserError(f"the cachefit runtime sources are missing in {src}",
                        "set CACHEFIT_RUNTIME_DIR to the runtime/ directory")
    return files


def _is_x86_64(compiler: list[str]) -> bool:
    try:
        out = subprocess.run([*compiler, "-dumpmachine"], capture_output=True, text=True,
                             check=False).stdout
    except OSError:
        return False
    return out.startswith("x86_64")


def runtime_library(compiler: list[str], writes: CacheWrites | None = None) -> Path:
    """Path of a libcachefit_rt.a usable with `compiler` (a C compiler command); with
    `writes`, built for this command alone when the cache cannot be written."""
    sources = _sources()
    prebuilt = runtime_dir() / "build" / LIB_NAME
    newest = max(f.stat().st_mtime for f in sources)
    if prebuilt.is_file() and prebuilt.stat().st_mtime >= newest:
        return prebuilt
    if shutil.which(compiler[0]) is None:
        raise ToolMissing(f"compiler {compiler[0]} not found", "install it or set CACHEFIT_CC")
    h = hashlib.sha256()
    for f in sources:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    h.update(" ".join([*compiler, *RUNTIME_CFLAGS]).encode())

    def archive(tmp_lib: Path) -> None:
        flags = list(RUNTIME_CFLAGS) + (["-mcx16"] if _is_x86_64(compiler) else [])
        objects = []
        for src in (f for f in sources if f.suffix == ".c"):
            obj = tmp_lib.parent / (src.stem + ".o")
            proc = subprocess.run([*compiler, "-x", "c", *flags, "-c", str(src), "-o",
                                   str(obj)], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise UserError(f"building the cachefit runtime with {compiler[0]} failed",
                                "run `make -C runtime` to see the errors",
                                details=proc.stderr.splitlines()[:5])
            objects.append(str(obj))
        proc = subprocess.run(["ar", "rcs", str(tmp_lib), *objects], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise UserError("archiving the cachefit runtime failed",
                            details=proc.stderr.splitlines()[:5])

    return build_cached(cache_dir() / "runtime" / h.hexdigest()[:16] / LIB_NAME, archive,
                        writes)
