"""Check that every unit of the code base still compiles with the rewritten files.

`check_units_compile` parses, with libclang and the new text of the rewritten files as
unsaved files, each unit that includes one of them (per the files the code-base scan saw it
read, by real path: a header included through a symbolic link counts; a unit the scan did
not see is parsed too), in worker processes (cachefit.parallel)
and with answers remembered in the scan cache (reorder.scan_cache, question `compiles`,
keyed by each rewritten file's name and content hash). A unit that includes none of the
rewritten files reads the same text as when it was scanned, so it is not parsed again.
The first unit in unit order that no longer compiles is refused (UnsafeTransformation,
nothing is written). It writes nothing and decides nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Mapping, Sequence

from cachefit.errors import Location, ParseError, UnsafeTransformation
from cachefit.frontend.clang_parse import parse_unit
from cachefit.parallel import ordered_map
from cachefit.reorder.scan_cache import ScanCache, unit_files

Unit = tuple[str, list[str]]
_NOT_C = (".S", ".sx", ".s")


def _compiles(unsaved: tuple[tuple[str, str], ...], question: str, cache: ScanCache | None,
              unit: Unit) -> ParseError | None:
    """Parse `unit` with `unsaved` (the cache did not answer): None, or why it fails."""
    path, args = unit
    if cache is not None:
        cache = cache.for_this_process()
        key = cache.key("compiles", path, args, question)
    try:
        tu = parse_unit(path, args, unsaved, keep_bodies=True)
    except ParseError as exc:
        return exc
    if cache is not None:
        cache.store(key, unit_files(tu), True)
    return None


def check_units_compile(units: Sequence[Unit], skip: Unit, contents: Mapping[str, bytes],
                        unit_files_seen: Mapping[tuple[str, tuple[str, ...]], Sequence[str]],
                        jobs: int | None, cache: ScanCache | None) -> None:
    """Raise UnsafeTransformation for the first unit (other than `skip`, already checked)
    that does not compile with `contents` (file -> new bytes)."""
    if not contents:
        return
    changed = {os.path.realpath(f) for f in contents}
    todo: list[Unit] = []
    for path, args in units:
        if (path, args) == skip or path.endswith(_NOT_C):
            continue
        seen = unit_files_seen.get((path, tuple(args)))
        if seen is None or changed.intersection(seen):
            todo.append((path, list(args)))
    question = "\n".join(f"{os.path.abspath(f)}\0{hashlib.sha256(d).hexdigest()}"
                         for f, d in sorted(contents.items()))
    if cache is not None:   # looked up here first: a run the cache answers starts no worker
        todo = [u for u in todo if cache.load(cache.key("compiles", u[0], u[1], question))
                is not True]
    unsaved = tuple((f, d.decode("utf-8", errors="surrogateescape"))
                    for f, d in sorted(contents.items()))
    job = functools.partial(_compiles, unsaved, question, cache)
    for (path, _args), exc in zip(todo, ordered_map(job, todo, jobs), strict=True):
        if exc is not None:
            raise UnsafeTransformation(
                f"{path} no longer compiles after reordering: {exc.what}",
                "nothing was written; report this with the input",
                exc.location or Location(path), exc.details) from exc
