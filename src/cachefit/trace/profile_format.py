"""The cachefit profile: per-type access sequences with counts (docs/profile-format.md).

A profile holds, for each traced type, its field layout at trace time and the distinct
sequences of accesses (role, offset, size, mode) seen during invocations, each with the
number of invocations that produced it. This module reads, validates, writes (JSON,
gzipped when the name ends in ``.gz``) and merges profiles; other stages (reorder,
report) import it. It does not trace, run programs or print anything.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from cachefit.atomic_files import save_output
from cachefit.errors import UserError
from cachefit.input_files import require_file
from cachefit.model.type_names import type_key

FORMAT = "cachefit-profile"
VERSION = 1

Mode = Literal["r", "w"]

# Top-level keys the format defines; anything else is kept as metadata.
_CORE_KEYS = ("format", "version", "cache_line", "invocations", "types")


@dataclass(frozen=True, order=True)
class Access:
    """One memory access: object role, byte offset into the object, size, read/write."""

    role: int
    offset: int
    size: int
    mode: Mode

    def to_json(self) -> list[Any]:
        return [self.role, self.offset, self.size, self.mode]

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass
class AccessSequence:
    """The accesses of one kind of invocation to one type, and how often it occurred.

    A literal sequence (`hits` None) lists every access in order. A *summary* (issue 26:
    an invocation too long to keep literally) lists each distinct access once, in the
    order of its first occurrence, and `hits[i]` is how often `accesses[i]` occurred in
    all `count` invocations together. `entry` is the kind of operation: the entry
    function whose invocations these were (None: not known, a version 1 profile)."""

    count: int
    accesses: tuple[Access, ...]
    entry: str | None = None
    hits: tuple[int, ...] | None = None

    @property
    def is_summary(self) -> bool:
        return self.hits is not None

    @property
    def roles(self) -> int:
        """Number of distinct objects (roles) the sequence touches."""
        return len({a.role for a in self.accesses})

    def footprint(self) -> frozenset[tuple[int, int, int]]:
        """The (role, offset, size) triples touched, ignoring order and mode."""
        return frozenset((a.role, a.offset, a.size) for a in self.accesses)


@dataclass(frozen=True)
class FieldSpan:
    """A data member as the profile stores it: name, byte offset, size in bytes."""

    name: str
    offset: int
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "offset": self.offset, "size": self.size}


@dataclass
class TypeProfile:
    """Everything traced for one type."""

    name: str
    size: int
    fields: list[FieldSpan] = field(default_factory=list)
    sequences: list[AccessSequence] = field(default_factory=list)
    runaway: int = 0
    outside_objects: int = 0
    table_full: int = 0

    @property
    def counted(self) -> int:
        """Invocations whose sequence for this type was recorded."""
        return sum(s.count for s in self.sequences)

    def sort(self) -> None:
        """Heaviest sequence first; ties by the accesses, so output is deterministic."""
        self.sequences.sort(key=lambda s: (-s.count, len(s.accesses),
                                           [a.to_json() for a in s.accesses]))

    def field_at(self, offset: int) -> FieldSpan | None:
        """The field whose bytes include `offset` (the last such for overlapping unions)."""
        hit = None
        for f in self.fields:
            if f.offset <= offset < f.offset + max(f.size, 1):
                hit = f
        return hit


@dataclass
class Profile:
    """A whole profile: types by qualified name plus run metadata."""

    types: dict[str, TypeProfile] = field(default_factory=dict)
    invocations: int = 0
    cache_line: int = 64
    metadata: dict[str, Any] = field(default_factory=dict)

    def name_of(self, name: str) -> str | None:
        """The profile's own name of the type `name` spells (`ring<int, 16>` is
        `ring<int,16>`, `struct item` is `item`: cachefit.model.type_names), None when it
        traced no such type."""
        key = type_key(name)
        return next((n for n in self.types if type_key(n) == key), None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "cache_line": self.cache_line,
            "invocations": self.invocations,
        }
        for key, value in self.metadata.items():
            if key not in _CORE_KEYS:
                out[key] = value
        types: dict[str, Any] = {}
        for name in sorted(self.types):
            t = self.types[name]
            t.sort()
            types[name] = {
                "size": t.size,
                "fields": [f.to_json() for f in t.fields],
                "sequences": [{"count": s.count, "accesses": [a.to_json() for a in s.accesses]}
                              for s in t.sequences],
                "dropped": {"runaway": t.runaway, "outside_objects": t.outside_objects,
                            "table_full": t.table_full},
            }
        out["types"] = types
        return out


# ---------------------------------------------------------------- writing

def dumps(profile: Profile) -> str:
    """The profile as JSON text: indented, one line per sequence, keys in a fixed order."""
    data = profile.to_json()
    lines = ["{"]
    top = [k for k in data if k != "types"]
    for key in top:
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key], sort_keys=True)},")
    lines.append('  "types": {')
    names = list(data["types"])
    for i, name in enumerate(names):
        t = data["types"][name]
        lines.append(f"    {json.dumps(name)}: {{")
        lines.append(f'      "size": {t["size"]},')
        lines.append('      "fields": [')
        for j, f in enumerate(t["fields"]):
            comma = "," if j + 1 < len(t["fields"]) else ""
            lines.append(f"        {json.dumps(f)}{comma}")
        lines.append("      ],")
        lines.append('      "sequences": [')
        for j, s in enumerate(t["sequences"]):
            comma = "," if j + 1 < len(t["sequences"]) else ""
            acc = json.dumps(s["accesses"], separators=(",", ":"))
            lines.append(f'        {{"count": {s["count"]}, "accesses": {acc}}}{comma}')
        lines.append("      ],")
        lines.append(f'      "dropped": {json.dumps(t["dropped"])}')
        lines.append("    }" + ("," if i + 1 < len(names) else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save(profile: Profile, path: str | os.PathLike[str]) -> None:
    """Write `profile` to `path` atomically; gzip when the name ends in `.gz`."""
    target = Path(path)
    text = dumps(profile).encode()
    payload = gzip.compress(text, mtime=0) if target.name.endswith(".gz") else text
    save_output(target, payload)


# ---------------------------------------------------------------- reading

def _bad(path: str, what: str) -> UserError:
    return UserError(f"{path}: not a valid cachefit profile: {what}",
                     "produce it with `cachefit trace` or `cachefit profile merge`")


def _int(value: Any, path: str, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _bad(path, f"{where} must be an integer >= {minimum}")
    return value


def from_json(data: Any, path: str = "<profile>") -> Profile:
    """Validate decoded JSON and build a Profile; raise UserError naming what is wrong."""
    if not isinstance(data, dict):
        raise _bad(path, "the top level is not an object")
    if data.get("format") != FORMAT:
        raise _bad(path, f'"format" is not "{FORMAT}"')
    version = data.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        raise UserError(f"{path}: profile format version {version!r} is not supported "
                        f"(this cachefit reads version {VERSION})",
                        "upgrade cachefit to read it" if newer else
                        "retrace with this version of cachefit")
    cache_line = _int(data.get("cache_line"), path, '"cache_line"', 1)
    invocations = _int(data.get("invocations"), path, '"invocations"')
    raw_types = data.get("types")
    if not isinstance(raw_types, dict):
        raise _bad(path, '"types" is not an object')
    types: dict[str, TypeProfile] = {}
    for name, t in raw_types.items():
        where = f'types["{name}"]'
        if not isinstance(t, dict):
            raise _bad(path, f"{where} is not an object")
        size = _int(t.get("size"), path, f"{where}.size")
        fields = []
        for i, f in enumerate(t.get("fields", [])):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise _bad(path, f"{where}.fields[{i}] needs a name")
            fields.append(FieldSpan(f["name"], _int(f.get("offset"), path, f"{where}.fields[{i}]"),
                                    _int(f.get("size"), path, f"{where}.fields[{i}]")))
        seqs = []
        raw_seqs = t.get("sequences")
        if not isinstance(raw_seqs, list):
            raise _bad(path, f"{where}.sequences is not a list")
        for i, s in enumerate(raw_seqs):
            swhere = f"{where}.sequences[{i}]"
            if not isinstance(s, dict) or not isinstance(s.get("accesses"), list):
                raise _bad(path, f"{swhere} needs count and accesses")
            count = _int(s.get("count"), path, f"{swhere}.count", 1)
            accesses = []
            for k, a in enumerate(s["accesses"]):
                if (not isinstance(a, list) or len(a) != 4 or a[3] not in ("r", "w")
                        or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                                   for x in a[:3])):
                    raise _bad(path, f"{swhere}.accesses[{k}] is not [role, offset, size, r|w]")
                accesses.append(Access(a[0], a[1], a[2], cast(Mode, a[3])))
            seqs.append(AccessSequence(count, tuple(accesses)))
        dropped = t.get("dropped", {})
        if not isinstance(dropped, dict):
            raise _bad(path, f"{where}.dropped is not an object")
        types[name] = TypeProfile(
            name=name, size=size, fields=fields, sequences=seqs,
            runaway=_int(dropped.get("runaway", 0), path, f"{where}.dropped.runaway"),
            outside_objects=_int(dropped.get("outside_objects", 0), path,
                                 f"{where}.dropped.outside_objects"),
            table_full=_int(dropped.get("table_full", 0), path, f"{where}.dropped.table_full"))
    metadata = {k: v for k, v in data.items() if k not in _CORE_KEYS}
    return Profile(types=types, invocations=invocations, cache_line=cache_line,
                   metadata=metadata)


def load(path: str | os.PathLike[str]) -> Profile:
    """Read a profile (plain or gzipped JSON) and validate it."""
    p = Path(path)
    require_file(p, "run `cachefit trace -o FILE -- COMMAND`", "profile")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror}") from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise _bad(str(p), "corrupt gzip data") from exc
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(str(p), f"invalid JSON ({exc})") from exc
    return from_json(data, str(p))


# ---------------------------------------------------------------- merging

def _same_layout(a: TypeProfile, b: TypeProfile) -> bool:
    return a.size == b.size and a.fields == b.fields


def merge(profiles: Sequence[Profile], *, names: Sequence[str] = ()) -> Profile:
    """Sum the counts of identical sequences (and invocations and drops) of all profiles.

    The layouts of a type must agree: a profile traced against another layout of the
    same type cannot be added. `names` (the inputs' file names) only improve messages.
    """
    if not profiles:
        raise UserError("nothing to merge", "name at least one profile")
    cache_line = profiles[0].cache_line
    out = Profile(cache_line=cache_line)
    counts: dict[str, dict[tuple[Access, ...], int]] = {}
    for i, prof in enumerate(profiles):
        label = names[i] if i < len(names) else f"profile {i + 1}"
        if prof.cache_line != cache_line:
            raise UserError(f"{label}: cache line {prof.cache_line} differs from {cache_line}",
                            "merge profiles made for the same machine")
        out.invocations += prof.invocations
        for name, t in prof.types.items():
            have = out.types.get(name)
            if have is None:
                have = out.types[name] = TypeProfile(name, t.size, list(t.fields))
                counts[name] = {}
            elif have.size == 0 and not have.fields:
                have.size, have.fields = t.size, list(t.fields)   # layout was unknown
            elif (t.size == 0 and not t.fields) or _same_layout(have, t):
                pass
            else:
                raise UserError(f"{label}: type {name} was traced with a different layout "
                                f"({t.size} bytes, {len(t.fields)} fields; expected "
                                f"{have.size} bytes, {len(have.fields)} fields)",
                                "retrace all inputs against the same build")
            have.runaway += t.runaway
            have.outside_objects += t.outside_objects
            have.table_full += t.table_full
            bucket = counts[name]
            for s in t.sequences:
                bucket[s.accesses] = bucket.get(s.accesses, 0) + s.count
    for name, bucket in counts.items():
        out.types[name].sequences = [AccessSequence(c, acc) for acc, c in bucket.items()]
        out.types[name].sort()
    out.metadata = merge_metadata([p.metadata for p in profiles])
    return out


def merge_metadata(metas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Combine run metadata: lists are concatenated (without repeats), numbers in
    `overhead` summed, the backend kept when all agree, the date set to now."""
    commands: list[Any] = []
    entries: list[str] = []
    programs: list[str] = []
    backends: set[str] = set()
    overhead: dict[str, float] = {}
    processes = 0
    for m in metas:
        for c in m.get("commands", []):
            if c not in commands:
                commands.append(c)
        for e in m.get("entry", []):
            if e not in entries:
                entries.append(e)
        for p in m.get("programs", []):
            if p not in programs:
                programs.append(p)
        if isinstance(m.get("backend"), str):
            backends.add(m["backend"])
        for k, v in (m.get("overhead") or {}).items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                overhead[k] = overhead.get(k, 0) + v
        if isinstance(m.get("processes"), int):
            processes += m["processes"]
    meta: dict[str, Any] = {
        "backend": backends.pop() if len(backends) == 1 else sorted(backends),
        "commands": commands,
        "date": now_iso(),
        "entry": entries,
        "overhead": overhead,
        "processes": processes,
        "programs": programs,
    }
    return meta


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
