"""Read the raw trace files the runtime writes and turn them into a profile.

Each process of a profile build writes `cachefit-<pid>.raw` (docs/raw-trace-format.md):
counters, the blob of its program (type layouts and entry names found at link time) and
its unique sequences with counts. This module parses those files and builds one merged
`Profile`. It does not run programs and does not write files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cachefit.errors import UserError
from cachefit.trace.profile_format import (
    Access,
    AccessSequence,
    FieldSpan,
    Mode,
    Profile,
    TypeProfile,
    merge,
    now_iso,
)

RAW_MAGIC = "cachefit-raw 1"


@dataclass
class RawTrace:
    """One process's trace."""

    path: str
    pid: int = 0
    exe: str = ""
    wall_ns: int = 0
    invocations: int = 0
    recorded: int = 0
    max_accesses: int = 0
    blob: dict[str, Any] = field(default_factory=dict)
    blob_entries: list[str] = field(default_factory=list)
    types: dict[int, str] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    stats: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    sequences: list[tuple[int, int, tuple[Access, ...]]] = field(default_factory=list)


def _bad(path: str, line_no: int, what: str) -> UserError:
    return UserError(f"{path}:{line_no}: not a cachefit raw trace: {what}",
                     "was the file cut short? rerun the traced program")


def parse_raw(path: str | Path) -> RawTrace:
    """Parse one raw trace file."""
    p = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror}") from exc
    raw = RawTrace(path=p)
    pos = 0
    line_no = 0
    ended = False

    def next_line() -> str | None:
        nonlocal pos, line_no
        if pos >= len(data):
            return None
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        line = data[pos:end].decode(errors="replace")
        pos = end + 1
        line_no += 1
        return line

    first = next_line()
    if first != RAW_MAGIC:
        raise _bad(p, 1, f"expected {RAW_MAGIC!r}")
    while (line := next_line()) is not None:
        key, _, rest = line.partition(" ")
        try:
            if key == "blob":
                n = int(rest)
                blob_text = data[pos:pos + n].decode(errors="replace")
                pos += n + 1
                line_no += blob_text.count("\n") + 1
                raw.blob, raw.blob_entries = _parse_blob(blob_text)
            elif key in ("pid", "wall_ns", "invocations", "recorded", "max_accesses"):
                setattr(raw, key, int(rest))
            elif key == "exe":
                raw.exe = rest
            elif key == "type":
                tid, name = rest.split(" ", 1)
                raw.types[int(tid)] = name
            elif key == "entry":
                _idx, count, name = rest.split(" ", 2)
                raw.entries[name] = int(count)
            elif key == "stat":
                tid, runaway, outside, full = rest.split()
                raw.stats[int(tid)] = (int(runaway), int(outside), int(full))
            elif key == "seq":
                parts = rest.split()
                tid, count, n = int(parts[0]), int(parts[1]), int(parts[2])
                quads = parts[3:]
                if len(quads) != n:
                    raise _bad(p, line_no, f"sequence says {n} accesses, has {len(quads)}")
                accesses = []
                for q in quads:
                    role, off, size, mode = q.split(":")
                    if mode not in ("r", "w"):
                        raise _bad(p, line_no, f"bad access mode in {q}")
                    accesses.append(Access(int(role), int(off), int(size), cast(Mode, mode)))
                raw.sequences.append((tid, count, tuple(accesses)))
            elif key == "end":
                ended = True
                break
        except ValueError as exc:
            raise _bad(p, line_no, str(exc)) from exc
    if not ended:
        raise _bad(p, line_no, "no end line")
    return raw


def _parse_blob(text: str) -> tuple[dict[str, Any], list[str]]:
    layout: dict[str, Any] = {}
    entries: list[str] = []
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        if key == "layout":
            try:
                layout = json.loads(rest)
            except json.JSONDecodeError:
                layout = {}
        elif key == "entry":
            entries.append(rest.strip())
    return layout, entries


def raw_to_profile(raw: RawTrace, cache_line: int = 64) -> Profile:
    """One process's trace as a profile (layouts from its program's blob)."""
    layouts = raw.blob.get("types", {}) if isinstance(raw.blob, dict) else {}
    types: dict[str, TypeProfile] = {}
    for tid, name in raw.types.items():
        lay = layouts.get(name, {})
        fields = [FieldSpan(str(f["name"]), int(f["offset"]), int(f["size"]))
                  for f in lay.get("fields", [])]
        runaway, outside, full = raw.stats.get(tid, (0, 0, 0))
        types[name] = TypeProfile(name=name, size=int(lay.get("size", 0)), fields=fields,
                                  runaway=runaway, outside_objects=outside, table_full=full)
    for tid, count, accesses in raw.sequences:
        name = raw.types.get(tid)
        if name is None:
            raise UserError(f"{raw.path}: sequence for unknown type id {tid}")
        types[name].sequences.append(AccessSequence(count, accesses))
    for t in types.values():
        t.sort()
    entries = list(raw.entries) or list(raw.blob_entries)
    meta: dict[str, Any] = {
        "backend": "compile-time",
        "instrumentation": raw.blob.get("instrumentation", "unknown"),
        "entry": entries,
        "programs": [raw.exe] if raw.exe else [],
        "processes": 1,
        "overhead": {"traced_seconds": raw.wall_ns / 1e9,
                     "recorded_accesses": raw.recorded},
        "date": now_iso(),
    }
    return Profile(types=types, invocations=raw.invocations, cache_line=cache_line,
                   metadata=meta)


def collect_raw_files(paths: Iterable[str | Path]) -> list[Path]:
    """Raw files named directly or found in named directories, in a stable order."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.glob("cachefit-*.raw")))
        elif p.is_file():
            out.append(p)
        else:
            raise UserError(f"{p}: no such raw trace file or directory")
    return out


def profile_from_raw(files: Iterable[str | Path], cache_line: int = 64) -> Profile:
    """Merge the raw traces of all processes into one profile."""
    raws = [parse_raw(f) for f in files]
    if not raws:
        raise UserError("no raw trace files", "run a profile build under `cachefit trace`")
    profiles = [raw_to_profile(r, cache_line) for r in raws]
    merged = merge(profiles, names=[r.path for r in raws])
    instr = {r.blob.get("instrumentation", "unknown") for r in raws}
    merged.metadata["backend"] = "compile-time"
    merged.metadata["instrumentation"] = instr.pop() if len(instr) == 1 else sorted(instr)
    # Entry functions keep the order of the project file.
    entries: list[str] = []
    for r in raws:
        for e in (r.blob_entries or list(r.entries)):
            if e not in entries:
                entries.append(e)
    merged.metadata["entry"] = entries
    counts: dict[str, int] = {}
    for r in raws:
        for e, c in r.entries.items():
            counts[e] = counts.get(e, 0) + c
    merged.metadata["entry_invocations"] = counts
    return merged
