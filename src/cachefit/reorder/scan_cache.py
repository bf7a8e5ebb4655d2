"""The per-unit cache of code-base scans: an unchanged unit is not parsed again.

Like ccache's direct mode. An entry's key is the SHA-256 of what the answer depends on
besides the files: the scanner (cachefit's version, the text of the modules that parse and
scan, the libclang library's path, size and mtime), the kind of question (`scan`: the
record's uses; `lacks`: the unit does not define a type; `compiles`: the unit compiles with
rewritten files), the unit's path and parse arguments, and the question itself (for a scan:
the record's USR, name and member list with offsets, the header macro, the offsets header,
the headers assembly units include; for a compile check: every rewritten file's name and
content hash). The entry stores the files the parse read (the main file and every file it
included, `tu.get_includes()`) with the SHA-256 of their contents, and the answer as plain
data (no clang objects); up to VARIANTS such answers, newest first, like the results of a
ccache manifest. A lookup is a hit when every file of one answer still has its hash; a
file that changed, vanished or cannot be read makes that answer a miss.

Entries are files `$CACHEFIT_CACHE_DIR/scan/ab/<key>.pickle` (docs/cache.md), compressed
pickles written to a temporary file and renamed; a concurrent writer of the same entry
writes the same answer. A damaged, truncated or foreign entry is a miss and is
overwritten, never an error. The cache directory is the user's, trusted as the compiled
helpers beside it are (entries are Python pickles). `CACHEFIT_SCAN_CACHE=0` (or
`--no-scan-cache`) turns it off.

Not covered (as in ccache's direct mode): a header added earlier on the include path that
would now be found instead of the one the unit included, and `__has_include` of a file that
did not exist. The cache neither parses nor decides anything about the code.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import clang.cindex as ci

import cachefit
from cachefit.atomic_files import write_bytes_atomic
from cachefit.cache_files import cache_dir
from cachefit.frontend.clang_parse import configure_libclang
from cachefit.frontend.compile_db import absolute_args

FORMAT = 2
VARIANTS = 4
"""Answers kept per entry, newest first, for different contents of the unit's files."""
# The modules whose text decides a scan's answer, relative to the cachefit package.
_SCANNER_CODE = ("reorder", "frontend", "rewrite", "model", "errors.py")
_fingerprint: str | None = None


def scanner_fingerprint() -> str:
    """cachefit's version, the text of the scanning modules and the libclang library."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"{cachefit.__version__}\0{FORMAT}\n".encode())
        pkg = Path(cachefit.__file__).parent
        for part in _SCANNER_CODE:
            p = pkg / part
            for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
                h.update(f"{f.relative_to(pkg)}\0".encode())
                h.update(f.read_bytes())
        configure_libclang()
        lib = ci.Config.library_file or ""
        try:
            st = os.stat(lib) if lib else None
        except OSError:
            st = None
        stamp = f"{st.st_size}\0{st.st_mtime_ns}" if st else ""
        h.update(f"libclang\0{lib}\0{stamp}\n".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def enabled_by_env(env: dict[str, str] | None = None) -> bool:
    """False when CACHEFIT_SCAN_CACHE is 0, no, off or false."""
    value = (env if env is not None else os.environ).get("CACHEFIT_SCAN_CACHE", "1")
    return value.strip().lower() not in ("0", "no", "off", "false")


def default_root() -> Path:
    """`scan/` in the cachefit cache directory."""
    return cache_dir() / "scan"


def unit_files(tu: ci.TranslationUnit) -> list[str]:
    """The files the parse of `tu` read, by real path (symbolic links resolved): its main
    file and everything it included."""
    files = {os.path.realpath(tu.spelling)}
    for inc in tu.get_includes():
        if inc.include is not None:
            files.add(os.path.realpath(inc.include.name))
    return sorted(files)


_process_cache: ScanCache | None = None


@dataclass
class ScanCache:
    """Entries under `root`, for one run that started at `started` (ns since the epoch),
    of the scanner `fingerprint` (taken once, in the process that starts the run, so its
    workers use the same keys). `digests` remembers file hashes for the run: a file is
    read and hashed once."""

    root: Path
    started: int = field(default_factory=time.time_ns)
    fingerprint: str = field(default_factory=scanner_fingerprint)
    digests: dict[str, bytes | None] = field(default_factory=dict)

    def for_this_process(self) -> ScanCache:
        """The run's cache object of this (worker) process, so the hashes it computed for
        one unit serve the next units it scans in the same run."""
        global _process_cache
        mine = _process_cache
        if mine is None or mine.root != self.root or mine.started != self.started:
            mine = _process_cache = ScanCache(self.root, self.started, self.fingerprint)
        return mine

    def key(self, kind: str, path: str, args: Iterable[str], question: str) -> str:
        """The entry's name. Include paths in `args` count as the absolute paths they name
        from the working directory (a relative `-Iinc` names another directory elsewhere)."""
        h = hashlib.sha256(self.fingerprint.encode())
        full = absolute_args(list(args), os.getcwd())
        for part in (kind, os.path.abspath(path), "\0".join(full), question):
            h.update(b"\x01" + part.encode("utf-8", errors="surrogateescape"))
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.pickle"

    def digest(self, path: str) -> bytes | None:
        """The SHA-256 of the file's contents (None: it cannot be read)."""
        if path not in self.digests:
            try:
                with open(path, "rb") as fh:
                    self.digests[path] = hashlib.file_digest(fh, "sha256").digest()
            except OSError:
                self.digests[path] = None
        return self.digests[path]

    def _variants(self, key: str) -> list[tuple[list[tuple[str, bytes]], Any]]:
        """The entry's answers, each with the files (and hashes) it was computed from;
        an entry that is missing, damaged or of another key has none."""
        try:
            data = pickle.loads(zlib.decompress(self._entry(key).read_bytes()))
        except Exception:    # noqa: BLE001 - missing or damaged: a miss, overwritten later
            return []
        if not (isinstance(data, dict) and data.get("format") == FORMAT
                and data.get("key") == key and isinstance(data.get("variants"), list)):
            return []
        out = []
        for variant in data["variants"]:
            if not (isinstance(variant, tuple) and len(variant) == 2
                    and isinstance(variant[0], list)
                    and all(isinstance(f, tuple) and len(f) == 2 and isinstance(f[0], str)
                            and isinstance(f[1], bytes) for f in variant[0])):
                return []
            out.append(variant)
        return out

    def load(self, key: str) -> Any | None:
        """The stored answer whose files are all unchanged, else None."""
        for files, value in self._variants(key):
            if all(self.digest(path) == digest for path, digest in files):
                return value
        return None

    def store(self, key: str, files: Iterable[str], value: Any) -> None:
        """Remember `value` with the current hashes of `files`, before the entry's other
        answers (at most VARIANTS: a header switched back and forth, as between two
        branches, hits both ways). Failures are ignored (the cache is an optimisation: a
        read-only or full cache directory does not stop a run). Nothing is stored when a
        file was modified since the run started: the parse may have read it before the
        change (ccache's "file too new")."""
        deps: list[tuple[str, bytes]] = []
        for path in files:
            digest = self.digest(path)
            try:
                too_new = os.stat(path).st_mtime_ns >= self.started
            except OSError:
                return
            if digest is None or too_new:
                return
            deps.append((path, digest))
        others = [v for v in self._variants(key) if v[0] != deps]
        data = {"format": FORMAT, "key": key,
                "variants": [(deps, value), *others][:VARIANTS]}
        try:
            write_bytes_atomic(self._entry(key),
                               zlib.compress(pickle.dumps(data, pickle.HIGHEST_PROTOCOL), 1))
        except OSError:
            pass


def clear(root: Path | None = None) -> int:
    """Remove every entry under `root` (default: the scan cache); returns how many."""
    top = root or default_root()
    n = 0
    for entry in top.glob("??/*.pickle"):
        try:
            entry.unlink()
            n += 1
        except OSError:
            pass
    for d in top.glob("??"):
        try:
            d.rmdir()
        except OSError:
            pass
    return n


def open_cache(use: bool = True) -> ScanCache | None:
    """The scan cache, or None when `use` is false or CACHEFIT_SCAN_CACHE turns it off."""
    if not use or not enabled_by_env():
        return None
    return ScanCache(default_root())
