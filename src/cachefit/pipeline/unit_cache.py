"""The content cache of optimize-mode objects (docs/cache.md), like ccache.

Key: SHA-256 of the preprocessed text, the options that reach the compile step (with the
action and language), the real compiler's identity (`--version` output, cached per
compiler path and mtime), the working directory when debug information is asked for, the
plan entries that may apply to the unit, and cachefit's version with a fingerprint of the
modules that transform units.
Value: the object file, the compiler's messages and the transformed text, with metadata
recording the size and SHA-256 of each: a hit is checked against it, and an entry that
does not match (a truncated or altered file) is removed, counted as damaged, reported in
a warning and compiled again. Objects live in `$CACHEFIT_CACHE_DIR/objects/` (default
`~/.cache/cachefit/objects/`), hit/miss counters in `stats.json` there; every file is
written through a temporary file and a rename, counters under a lock. The total size is
bounded by CACHEFIT_CACHE_MAX_SIZE (least recently used objects are evicted);
CACHEFIT_CACHE=0 turns the cache off.
A cache directory that cannot be written (read-only, full, not a directory) turns the
cache off for the rest of the command, with one warning (one per `cachefit build`: see
cachefit.cache_files.report_unwritable): compiling goes on without it. This module never
runs anything but `COMPILER --version`, and never touches files outside its directory,
the `-o` output and that warning's notice file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cachefit
from cachefit.atomic_files import write_bytes_atomic
from cachefit.cache_files import cache_dir, failure_reason, report_unwritable
from cachefit.errors import Location, UserError
from cachefit.frontend.compiler_args import CompilerCommand, select
from cachefit.pipeline.wrapper_steps import has_debug

DEFAULT_MAX_SIZE = 5 * 1024 ** 3
# The files of an entry `ab/<key>.*`: the object, the compiler's messages, the transformed
# text, and the metadata (the size and SHA-256 of the others), written after them: an
# entry is complete when its metadata is there.
OBJECT, MESSAGES, UNIT, META = ".o", ".stderr", ".unit", ".json"
PARTS = (OBJECT, MESSAGES, UNIT)
COUNTERS = ("hits", "misses", "damaged", "size")
KEY_SCHEMA = "cachefit-object-key-1"
_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "M": 1024 ** 2, "MB": 1024 ** 2,
          "G": 1024 ** 3, "GB": 1024 ** 3, "T": 1024 ** 4, "TB": 1024 ** 4}


def parse_size(text: str) -> int:
    """`5G`, `500M`, `64K` or a number of bytes."""
    t = text.strip().upper()
    digits = t.rstrip("KMGTB")
    unit = t[len(digits):]
    try:
        value = float(digits)
    except ValueError:
        value = -1
    if value < 0 or unit not in _UNITS:
        raise UserError(f"CACHEFIT_CACHE_MAX_SIZE={text} is not a size",
                        "write a number of bytes or a size like 500M or 5G")
    return int(value * _UNITS[unit])


# The code that decides what a transformed unit looks like; editing any of it (an upgrade
# without a version change, a development checkout) must not reuse older objects.
_TRANSFORM_CODE = ("flatten", "rewrite", "reorder", "frontend", "model",
                   "pipeline/unit_transform.py",
                   "pipeline/wrapper_steps.py", "pipeline/optimize_wrapper.py")
_fingerprint: str | None = None


def code_fingerprint() -> str:
    """cachefit's version and the size and mtime of each module of the transformation."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(cachefit.__version__.encode())
        pkg = Path(cachefit.__file__).parent
        files: list[Path] = []
        for part in _TRANSFORM_CODE:
            p = pkg / part
            files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for p in files:
            try:
                st = p.stat()
            except OSError:
                continue
            h.update(f"{p.relative_to(pkg)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


@dataclass
class CacheStats:
    """The counters and the contents of the object cache."""

    directory: Path
    enabled: bool
    hits: int
    misses: int
    damaged: int
    entries: int
    size: int
    max_size: int

    def lines(self) -> list[str]:
        total = self.hits + self.misses
        rate = f" ({100 * self.hits / total:.0f}% hits)" if total else ""
        return [f"cache directory  {self.directory}",
                f"enabled          {'yes' if self.enabled else 'no (CACHEFIT_CACHE=0)'}",
                f"hits             {self.hits}{rate}",
                f"misses           {self.misses}",
                f"damaged          {self.damaged} (removed and compiled again)",
                f"objects          {self.entries}",
                f"size             {self.size / 1024 ** 2:.1f} MiB of "
                f"{self.max_size / 1024 ** 3:.1f} GiB"]


@dataclass(frozen=True)
class CachedEntry:
    """What a hit gives besides the object: the compiler's messages of the first compile
    and the transformed text (None when the plan left the unit alone)."""

    messages: bytes
    unit_text: bytes | None


class _Damaged(Exception):
    """An entry whose files are not what its metadata recorded (the message says how)."""


class UnitCache:
    """The object cache of one wrapper invocation; its warnings go to `warnings`."""

    def __init__(self, directory: Path, enabled: bool = True,
                 max_size: int = DEFAULT_MAX_SIZE, env: Mapping[str, str] | None = None,
                 warnings: list[str] | None = None) -> None:
        self.directory = directory
        self.enabled = enabled
        self.max_size = max_size
        self.env = dict(os.environ if env is None else env)
        self.warnings = [] if warnings is None else warnings

    @classmethod
    def from_env(cls, env: Mapping[str, str], warnings: list[str] | None = None) -> UnitCache:
        enabled = env.get("CACHEFIT_CACHE", "1").strip().lower() not in ("0", "no", "false",
                                                                        "off")
        size = env.get("CACHEFIT_CACHE_MAX_SIZE")
        return cls(cache_dir(env) / "objects", enabled,
                   parse_size(size) if size else DEFAULT_MAX_SIZE, env, warnings)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Writes to the cache: the first that fails (read-only, full, not a directory)
        turns the cache off for the rest of the command, with one warning."""
        try:
            yield
        except OSError as exc:
            if self.enabled:
                self.enabled = False
                report_unwritable(self.warnings, self.directory, exc, self.env)

    # ------------------------------------------------------------------ key

    def compiler_identity(self, compiler: Sequence[str]) -> str:
        """The compiler command, its resolved path and its `--version` output (cached in
        `compilers/` per path and mtime, so it runs once per installed compiler)."""
        exe = shutil.which(compiler[0]) or compiler[0]
        try:
            st = os.stat(exe)
            stamp = f"{os.path.realpath(exe)}\0{st.st_size}\0{st.st_mtime_ns}"
        except OSError:
            stamp = exe
        ident = hashlib.sha256(f"{' '.join(compiler)}\0{stamp}".encode()).hexdigest()
        memo = self.directory / "compilers" / f"{ident}.txt"
        try:
            return memo.read_text()
        except OSError:
            pass
        try:
            proc = subprocess.run([*compiler, "--version"], capture_output=True, text=True,
                                  check=False, env=self.env)
            version = proc.stdout
        except OSError:
            version = "?"
        text = f"{' '.join(compiler)}\n{stamp}\n{version}"
        with self._writing():
            write_bytes_atomic(memo, text.encode())
        return text

    def key(self, text: bytes, cmd: CompilerCommand, compiler: Sequence[str],
            plan_entries: Mapping[str, Any], cwd: str, lang: str) -> str:
        flags = select(cmd, keep={"other"})
        parts: dict[str, Any] = {
            "schema": KEY_SCHEMA,
            "cachefit": code_fingerprint(),
            "compiler": self.compiler_identity(compiler),
            "action": cmd.action,
            "language": lang,
            "flags": flags,
            "cwd": cwd if has_debug(flags) else "",
            "plan": plan_entries,
        }
        h = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
        h.update(b"\0")
        h.update(text)
        return h.hexdigest()

    # ------------------------------------------------------------------ store

    def _path(self, key: str, part: str) -> Path:
        return self.directory / key[:2] / f"{key}{part}"

    def _object(self, key: str) -> Path:
        return self._path(key, OBJECT)

    def _read_entry(self, key: str) -> dict[str, bytes] | None:
        """The files of the entry of `key` by part, each checked against the size and
        SHA-256 its metadata recorded; None when the entry is not there (or not complete).
        Raises `_Damaged` when a file does not match."""
        try:
            meta = self._path(key, META).read_bytes()
        except OSError:
            return None
        try:
            data = json.loads(meta)
            recorded = {part: (int(v["size"]), str(v["sha256"]))
                        for part, v in data["parts"].items()}
            if data["key"] != key or OBJECT not in recorded or not set(recorded) <= set(PARTS):
                raise ValueError(key)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _Damaged(f"{self._path(key, META).name}: not the metadata of this "
                           "entry") from exc
        parts = {}
        for part, (size, digest) in recorded.items():
            path = self._path(key, part)
            try:
                content = path.read_bytes()
            except FileNotFoundError:
                return None         # removed meanwhile (eviction): a miss
            except OSError as exc:
                raise _Damaged(f"{path.name}: {exc.strerror}") from exc
            if len(content) != size:
                raise _Damaged(f"{path.name} has {len(content)} bytes where {size} were "
                               "stored")
            if hashlib.sha256(content).hexdigest() != digest:
                raise _Damaged(f"{path.name} is not the file that was stored (SHA-256)")
            parts[part] = content
        return parts

    def fetch(self, key: str, out: str) -> CachedEntry | None:
        """Copy the cached object for `key` to `out` and return the rest of its entry;
        count a hit or a miss. An entry whose files do not match its metadata is removed
        and counted as damaged, with a warning: a miss. An output that cannot be written
        is a miss, not counted (the compiler then reports it)."""
        if not self.enabled or not Path(out).absolute().parent.is_dir():
            return None
        try:
            parts = self._read_entry(key)
        except _Damaged as damage:
            self.warnings.append(f"the object cache entry {self._object(key)} was damaged "
                                 f"({damage}); it was removed and the unit compiled again")
            with self._writing():
                self._remove(self._object(key))
                self._count(misses=1, damaged=1)
            return None
        if parts is None:
            with self._writing():
                self._count(misses=1)
            return None
        try:
            write_bytes_atomic(out, parts[OBJECT])
        except OSError:
            return None
        with self._writing():
            os.utime(self._object(key))     # least recently used = oldest mtime
            self._count(hits=1)
        return CachedEntry(parts.get(MESSAGES, b""), parts.get(UNIT))

    def store(self, key: str, out: str, unit_text: bytes | None = None,
              messages: bytes = b"") -> None:
        """Keep a copy of the freshly compiled `out`, the transformed text (if any) and
        the compiler's messages (if any), then the metadata with the size and SHA-256 of
        each: a reader that finds the metadata finds the others. A write that fails
        removes what was written."""
        if not self.enabled:
            return
        stored = False
        with self._writing():
            parts = {OBJECT: Path(out).read_bytes()}
            if messages:
                parts[MESSAGES] = messages
            if unit_text is not None:
                parts[UNIT] = unit_text
            meta = json.dumps({"key": key, "parts": {
                part: {"size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
                for part, content in parts.items()}}).encode()
            for part, content in parts.items():
                write_bytes_atomic(self._path(key, part), content)
            write_bytes_atomic(self._path(key, META), meta)
            stored = True
            if self._count(size=sum(map(len, parts.values())) + len(meta)) > self.max_size:
                self._evict()
        if not stored:
            with suppress(OSError):
                self._remove(self._object(key))

    # ------------------------------------------------------------------ counters

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read_counts(self) -> dict[str, int]:
        try:
            data = json.loads((self.directory / "stats.json").read_text())
            return {k: int(data.get(k, 0)) for k in COUNTERS}
        except (OSError, ValueError, AttributeError):
            return dict.fromkeys(COUNTERS, 0)

    def _count(self, hits: int = 0, misses: int = 0, damaged: int = 0, size: int = 0) -> int:
        with self._locked():
            c = self._read_counts()
            c["hits"] += hits
            c["misses"] += misses
            c["damaged"] += damaged
            c["size"] += size
            write_bytes_atomic(self.directory / "stats.json", (json.dumps(c) + "\n").encode())
            return c["size"]

    def _objects(self) -> list[tuple[float, int, Path]]:
        """(mtime, bytes, object path) of every cached object; bytes include the other
        files of its entry."""
        out = []
        if self.directory.is_dir():
            for p in self.directory.glob("??/*.o"):
                try:
                    st = p.stat()
                except OSError:
                    continue
                extra = sum(q.stat().st_size for q in (p.with_suffix(s)
                                                         for s in (MESSAGES, UNIT, META))
                            if q.is_file())
                out.append((st.st_mtime, st.st_size + extra, p))
        return out

    def _evict(self) -> None:
        """Remove the least recently used objects until the cache is at 90% of its limit."""
        with self._locked():
            objects = sorted(self._objects())
            total = sum(s for _, s, _ in objects)
            for _, size, p in objects:
                if total <= self.max_size * 0.9:
                    break
                self._remove(p)
                total -= size
            c = self._read_counts()
            c["size"] = total
            write_bytes_atomic(self.directory / "stats.json", (json.dumps(c) + "\n").encode())

    @staticmethod
    def _remove(obj: Path) -> None:
        """Remove the entry of the object `obj`, its metadata first."""
        for part in (META, *PARTS):
            obj.with_suffix(part).unlink(missing_ok=True)

    def stats(self) -> CacheStats:
        objects = self._objects()
        c = self._read_counts()
        return CacheStats(self.directory, self.enabled, c["hits"], c["misses"], c["damaged"],
                          len(objects), sum(s for _, s, _ in objects), self.max_size)

    def clear(self) -> int:
        """Remove every cached object and reset the counters; returns how many objects.
        A cache directory that cannot be written is a `UserError` naming it."""
        try:
            with self._locked():
                objects = self._objects()
                for _, _, p in objects:
                    self._remove(p)
                for d in self.directory.glob("??"):
                    if d.is_dir() and not any(d.iterdir()):
                        d.rmdir()
                if (self.directory / "compilers").is_dir():
                    shutil.rmtree(self.directory / "compilers")
                write_bytes_atomic(self.directory / "stats.json",
                                   (json.dumps(dict.fromkeys(COUNTERS, 0)) + "\n").encode())
        except OSError as exc:
            raise UserError(f"cannot clear the cache: {failure_reason(self.directory, exc)}",
                            "set CACHEFIT_CACHE_DIR to a directory you can write, or remove "
                            "it by hand", Location(str(self.directory))) from exc
        return len(objects)
