"""Read the raw trace files the runtime writes and turn them into a profile.

Each process of a profile build writes `cachefit-<pid>.raw` (docs/raw-trace-format.md):
counters, the blob of its program (type layouts and entry names found at link time), its
unique literal sequences and its unique summaries of long invocations, each with its type,
its kind of operation (entry function) and its count, and per type the distribution of its
objects' base addresses modulo 64 (`align` lines, issue 26) and the number of objects
registered (`objects` lines, issue 27), and in multi-threaded processes the threads'
sharing of the objects (`threads`/`share`/`shobj`/`handoff` lines, issue 30, read by
cachefit.trace.raw_sharing). This module parses those files (version 2, and version 1 of
earlier runtimes) and builds one merged `Profile` whose sequences carry their entry and,
for a summary, its hits, and whose types carry their alignment and sharing (added up over
the processes by cachefit.model.profile_merge); the guards that fired and the objects
registered are metadata. The work is proportional to the distinct sequences and
summaries: each line is read once, in bulk when it is in the runtime's canonical form
(cachefit.trace.raw_words), and equal access words share one `Access`. It does not
run programs and does not write files. (The QEMU backend has its own result format, read
by cachefit.trace.qemu_backend.) A record name that one program defines several times and
another once gets one key per definition in all of them (`name_definitions`, issue 27).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cachefit.errors import UserError
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Mode,
    Profile,
    TypeProfile,
    now_iso,
)
from cachefit.model.profile_merge import merge
from cachefit.model.type_names import split_definition
from cachefit.trace.raw_sharing import SHARE_KEYS, RawSharing, parse_line, type_sharing
from cachefit.trace.raw_words import WordTable

RAW_MAGIC = "cachefit-raw 2"
RAW_MAGIC_V1 = "cachefit-raw 1"
ALIGN_MODULUS = 64
"""`align` lines give base addresses modulo this many bytes."""


@dataclass(frozen=True)
class RawSequence:
    """One `seq` or `sum` line: type id, entry index (-1: `cachefit_begin`, None: a
    version 1 file, which has none), invocations, accesses, and for a summary the hits of
    each distinct access."""

    type_id: int
    entry: int | None
    count: int
    accesses: tuple[Access, ...]
    hits: tuple[int, ...] | None = None


@dataclass
class RawTrace:
    """One process's trace."""

    path: str
    version: int = 2
    pid: int = 0
    exe: str = ""
    wall_ns: int = 0
    invocations: int = 0
    recorded: int = 0
    max_accesses: int = 0
    max_objects: int = 0
    max_distinct: int = 0
    deep: int = 0
    blob: dict[str, Any] = field(default_factory=dict)
    blob_entries: list[str] = field(default_factory=list)
    types: dict[int, str] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    entry_names: dict[int, str] = field(default_factory=dict)
    # per type id: (runaway, outside objects, table full); runaway is 0 from version 2 on
    stats: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # per type id: (invocations with objects beyond max_objects left out, summaries that
    # reached max_distinct)
    guards: dict[int, tuple[int, int]] = field(default_factory=dict)
    sequences: list[RawSequence] = field(default_factory=list)
    # per type id: base address % ALIGN_MODULUS -> (invocation, object) pairs; a type
    # without an `align` line is absent (unknown)
    alignment: dict[int, dict[int, int]] = field(default_factory=dict)
    # per type id: objects registered during the run (`objects` lines, issue 27); None
    # when the file has none (a runtime before them): unknown
    registered: dict[int, int] | None = None
    # per type id: objects still registered when a heap block for other types was (`reused`
    # lines): given back to a pool or lookaside list unseen; a type without one: none
    reused: dict[int, int] = field(default_factory=dict)
    # threads numbered in the process (`threads` line, issue 30); 0: sharing not tracked
    threads: int = 0
    # per type id: its sharing lines (issue 30); empty when sharing was not tracked
    sharing: dict[int, RawSharing] = field(default_factory=dict)


def _bad(path: str, line_no: int, what: str) -> UserError:
    return UserError(f"{path}:{line_no}: not a cachefit raw trace: {what}",
                     "was the file cut short? rerun the traced program")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while raw traces are read and merged: the objects built
    (tuples of ints and shared Accesses, the lists and dicts holding them) form no cycles,
    so its passes over them are pure cost. On again afterwards if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def parse_raw(path: str | Path) -> RawTrace:
    """Parse one raw trace file."""
    with _collector_paused():
        return _parse_raw(path)


def _parse_raw(path: str | Path) -> RawTrace:
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
    if first not in (RAW_MAGIC, RAW_MAGIC_V1):
        raise _bad(p, 1, f"expected {RAW_MAGIC!r}")
    v2 = first == RAW_MAGIC
    raw.version = 2 if v2 else 1
    table = WordTable()
    while (line := next_line()) is not None:
        key, _, rest = line.partition(" ")
        try:
            if key == "blob":
                n = int(rest)
                blob_text = data[pos:pos + n].decode(errors="replace")
                pos += n + 1
                line_no += blob_text.count("\n") + 1
                raw.blob, raw.blob_entries = _parse_blob(blob_text)
            elif key in ("pid", "wall_ns", "invocations", "recorded", "max_accesses",
                         "max_objects", "max_distinct", "deep"):
                setattr(raw, key, int(rest))
            elif key == "exe":
                raw.exe = rest
            elif key == "type":
                tid, name = rest.split(" ", 1)
                raw.types[int(tid)] = name
            elif key == "entry":
                idx, count, name = rest.split(" ", 2)
                raw.entries[name] = int(count)
                raw.entry_names[int(idx)] = name
            elif key == "stat":
                words = [int(w) for w in rest.split()]
                if v2:
                    tid, outside, full, objects, distinct = words
                    raw.stats[tid] = (0, outside, full)
                    raw.guards[tid] = (objects, distinct)
                else:
                    tid, runaway, outside, full = words
                    raw.stats[tid] = (runaway, outside, full)
            elif key == "objects" and v2:
                tid, count = (int(w) for w in rest.split())
                if count < 0:
                    raise ValueError(f"bad object count {count}")
                if raw.registered is None:
                    raw.registered = {}
                raw.registered[tid] = count
            elif key == "reused" and v2:
                tid, count = (int(w) for w in rest.split())
                if count < 0:
                    raise ValueError(f"bad reused count {count}")
                raw.reused[tid] = raw.reused.get(tid, 0) + count
            elif key == "align" and v2:
                raw.alignment[int(rest.split(" ", 1)[0])] = _parse_align(rest)
            elif key in SHARE_KEYS and v2:
                n = parse_line(key, rest, raw.sharing)
                if n is not None:
                    raw.threads = n
            elif key in ("seq", "sum") and (v2 or key == "seq"):
                raw.sequences.append(_parse_sequence(key == "sum", v2, rest, table, p, line_no))
            elif key == "end":
                ended = True
                break
        except ValueError as exc:
            raise _bad(p, line_no, str(exc)) from exc
    if not ended:
        raise _bad(p, line_no, "no end line")
    return raw


def _parse_sequence(summary: bool, v2: bool, rest: str, table: WordTable, path: str,
                    line_no: int) -> RawSequence:
    """`TYPE ENTRY COUNT LEN WORD...` (version 1: no ENTRY), a word `r:o:s:m` (a summary's
    `r:o:s:m:hits`). A line in the runtime's canonical form is read in bulk by `table`;
    any other is read here word by word (its errors are this function's)."""
    if v2 and (fast := table.sequence(rest, summary)) is not None:
        return RawSequence(*fast)
    cache = table.accesses
    parts = rest.split()
    head = 4 if v2 else 3
    if len(parts) < head:
        raise _bad(path, line_no, "sequence line too short")
    tid = int(parts[0])
    entry = int(parts[1]) if v2 else None
    count, n = int(parts[head - 2]), int(parts[head - 1])
    words = parts[head:]
    if len(words) != n:
        raise _bad(path, line_no, f"sequence says {n} accesses, has {len(words)}")
    hits: tuple[int, ...] | None = None
    if summary:
        pairs = [w.rpartition(":") for w in words]
        words = [w for w, _, _ in pairs]
        hits = tuple(int(h) for _, _, h in pairs)
    accesses = []
    for w in words:
        a = cache.get(w)
        if a is None:
            a = cache[w] = _access(w, path, line_no)
        accesses.append(a)
    return RawSequence(tid, entry, count, tuple(accesses), hits)


def _parse_align(rest: str) -> dict[int, int]:
    """`TYPE MOD:COUNT ...` (MOD ascending, below ALIGN_MODULUS, COUNT >= 1) as
    {MOD: COUNT}."""
    out: dict[int, int] = {}
    for word in rest.split()[1:]:
        mod, _, count = word.partition(":")
        m, n = int(mod), int(count)
        if not 0 <= m < ALIGN_MODULUS or n < 1 or m in out:
            raise ValueError(f"bad alignment word {word}")
        out[m] = n
    return dict(sorted(out.items()))


def profile_alignment(counts: dict[int, int] | None, cache_line: int
                      ) -> dict[int, int] | None:
    """An `align` line's counts modulo `cache_line`: reduced when the line divides
    ALIGN_MODULUS, unknown (None) when it is longer or no object was counted."""
    if not counts or ALIGN_MODULUS % cache_line:
        return None
    out: dict[int, int] = {}
    for mod, n in counts.items():
        out[mod % cache_line] = out.get(mod % cache_line, 0) + n
    return dict(sorted(out.items()))


def _access(word: str, path: str, line_no: int) -> Access:
    role, off, size, mode = word.split(":")
    if mode not in ("r", "w"):
        raise _bad(path, line_no, f"bad access mode in {word}")
    return Access(int(role), int(off), int(size), cast(Mode, mode))


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
        size = int(lay.get("size", 0))
        shared = raw.sharing.get(tid)
        types[name] = TypeProfile(name=name, size=size, fields=fields,
                                  runaway=runaway, outside_objects=outside, table_full=full,
                                  alignment=profile_alignment(raw.alignment.get(tid),
                                                              cache_line),
                                  alignment_line=cache_line,
                                  sharing=None if shared is None
                                  else type_sharing(shared, size))
    for s in raw.sequences:
        name = raw.types.get(s.type_id)
        if name is None:
            raise UserError(f"{raw.path}: sequence for unknown type id {s.type_id}")
        entry = raw.entry_names.get(s.entry) if s.entry is not None else None
        types[name].sequences.append(AccessSequence(s.count, s.accesses, entry, s.hits))
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
    unconverted = raw.blob.get("unconverted_sites") if isinstance(raw.blob, dict) else None
    if raw.exe and isinstance(unconverted, int) and not isinstance(unconverted, bool):
        meta["unconverted_sites"] = {raw.exe: unconverted}
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
    with _collector_paused():
        return _profile_from_raw(files, cache_line)


def _profile_from_raw(files: Iterable[str | Path], cache_line: int) -> Profile:
    raws = [parse_raw(f) for f in files]
    if not raws:
        raise UserError("no raw trace files", "run a profile build under `cachefit trace`")
    name_definitions(raws)
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
    guards = _guards(raws)
    if guards:
        merged.metadata["guards"] = guards
    registered = _registered(raws)
    if registered is not None:
        merged.metadata["registered"] = registered
    reused = _reused(raws)
    if reused:
        merged.metadata["reused"] = reused
    return merged


def guard_notes(profile: Profile) -> list[str]:
    """One line per memory guard of the runtime that fired during the run (issue 26):
    what was lost and which setting to raise. From the profile's `guards` metadata (per
    type `objects` and `distinct`, and `deep`) and each type's `table_full` count; and one
    per type whose objects' memory was reused unseen (`reused` metadata)."""
    out: list[str] = []
    guards = profile.metadata.get("guards")
    guards = guards if isinstance(guards, dict) else {}
    per_type = guards.get("types")
    per_type = per_type if isinstance(per_type, dict) else {}
    for name in sorted(set(per_type) | set(profile.types)):
        g = per_type.get(name)
        g = g if isinstance(g, dict) else {}
        objects, distinct = _count(g.get("objects")), _count(g.get("distinct"))
        t = profile.types.get(name)
        full = t.table_full if t is not None else 0
        if objects:
            out.append(f"{name}: in {_times(objects, 'invocation')}, objects beyond "
                       "max_objects were left out (their accesses are not in the profile; "
                       "the invocations are); raise [trace] max_objects in cachefit.toml")
        if distinct:
            out.append(f"{name}: {_times(distinct, 'summary', 'summaries')} of long "
                       "invocations reached max_distinct distinct accesses (later new "
                       "accesses were not kept); raise [trace] max_distinct in cachefit.toml")
        if full:
            out.append(f"{name}: {_times(full, 'invocation')} did not fit the table of "
                       "max_sequences distinct sequences (folded into one summary per kind "
                       "of operation, their order lost); raise [trace] max_sequences in "
                       "cachefit.toml")
    reused = profile.metadata.get("reused")
    for name, n in sorted(reused.items()) if isinstance(reused, dict) else []:
        if _count(n):
            were, it = ("was", "it") if n == 1 else ("were", "them")
            out.append(f"{name}: {_times(n, 'object')} of {name} {were} still registered "
                       f"when memory for another type was allocated over {it} (it was given "
                       "back without a free cachefit saw, as to a pool or a lookaside list; "
                       f"until it was handed out again, what used it counted for {it}); "
                       "name the function that gives such blocks back in [trace] "
                       "deallocators in cachefit.toml")
    deep = _count(guards.get("deep"))
    if deep:
        out.append(f"{_times(deep, 'entry function call')} nested deeper than the runtime's "
                   "8 active invocations counted only for the enclosing invocations (this "
                   "depth is fixed: choose [trace] entry functions that nest less)")
    return out


def _count(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _times(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _registered(raws: Iterable[RawTrace]) -> dict[str, int] | None:
    """Objects registered per type name during the run, summed over the processes (every
    traced type, 0 included), for the missed-object note (issue 27); None when a process's
    file has no `objects` lines (a runtime before them): unknown."""
    out: dict[str, int] = {}
    for r in raws:
        if r.registered is None:
            return None
        for tid, name in r.types.items():
            out[name] = out.get(name, 0) + r.registered.get(tid, 0)
    return dict(sorted(out.items()))


def _reused(raws: Iterable[RawTrace]) -> dict[str, int]:
    """Objects per type name still registered when a heap block for other types was,
    summed over the processes; types with none are left out."""
    out: dict[str, int] = {}
    for r in raws:
        for tid, count in r.reused.items():
            if count and tid in r.types:
                name = r.types[tid]
                out[name] = out.get(name, 0) + count
    return dict(sorted(out.items()))


def _guards(raws: Iterable[RawTrace]) -> dict[str, Any]:
    """The runtime's memory guards that fired, summed over the processes: per type,
    invocations whose objects beyond max_objects were left out (`objects`) and summaries
    that reached max_distinct distinct accesses (`distinct`); entry calls nested deeper than
    the runtime's frames (`deep`, counted for the enclosing invocations only). Empty when
    none fired."""
    per_type: dict[str, dict[str, int]] = {}
    deep = 0
    for r in raws:
        deep += r.deep
        for tid, (objects, distinct) in r.guards.items():
            if objects or distinct:
                name = r.types.get(tid, str(tid))
                g = per_type.setdefault(name, {"objects": 0, "distinct": 0})
                g["objects"] += objects
                g["distinct"] += distinct
    out: dict[str, Any] = {}
    if per_type:
        out["types"] = dict(sorted(per_type.items()))
    if deep:
        out["deep"] = deep
    return out


def _layout_signature(layout: object) -> tuple[int, tuple[tuple[str, int, int], ...]] | None:
    """A blob layout's size and fields, to tell one record definition from another."""
    if not isinstance(layout, dict) or not isinstance(layout.get("fields"), list):
        return None
    try:
        return int(layout.get("size", 0)), tuple(
            (str(f["name"]), int(f["offset"]), int(f["size"])) for f in layout["fields"])
    except (KeyError, TypeError, ValueError):
        return None


def name_definitions(raws: Iterable[RawTrace]) -> None:
    """One key per record definition across the processes (issue 27): a program that
    defines a traced name once names its type plainly (`dict`), one that defines it
    several times names each definition (`dict@deps/hiredis/dict.h:55`, from its blob).
    When both ran, a plain type whose layout (size and fields) is that of one named
    definition takes that definition's key, so the profile adds them up; a plain type
    matching none keeps its name. Changes the raws' type names (and their blobs'
    layouts) in place; nothing changes when no process named a definition."""
    raws = list(raws)
    named: dict[str, dict[tuple[int, tuple[tuple[str, int, int], ...]], str]] = {}
    for r in raws:
        layouts = r.blob.get("types", {}) if isinstance(r.blob, dict) else {}
        for key in r.types.values():
            plain, where = split_definition(key)
            sig = _layout_signature(layouts.get(key)) if isinstance(layouts, dict) else None
            if where is not None and sig is not None:
                named.setdefault(plain, {}).setdefault(sig, key)
    if not named:
        return
    for r in raws:
        layouts = r.blob.get("types") if isinstance(r.blob, dict) else None
        if not isinstance(layouts, dict):
            continue
        for tid, name in list(r.types.items()):
            sig = _layout_signature(layouts.get(name)) if name in named else None
            key = named[name].get(sig) if sig is not None else None
            if key is not None and key not in r.types.values():
                r.types[tid] = key
                r.blob["types"] = {**layouts, key: layouts[name]}
                layouts = r.blob["types"]
