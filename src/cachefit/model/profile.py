"""The cachefit profile: per-type access sequences with counts (docs/profile-format.md).

A profile holds, for each traced type, its field layout at trace time and the distinct
sequences of accesses (role, offset, size, mode) seen during invocations, each with its
kind of operation (the entry function) and the number of invocations that produced it; a
*summary* stands for long invocations (each distinct access once, with its hits). This
module alone reads, validates and writes profiles (merging: cachefit.model.profile_merge);
the other stages (layout, reorder, report) take its typed objects (`Profile`,
`TypeProfile`, `AccessSequence`).

Version 2 is written: JSON whose per-type sequences are packed as base64 of
zstd-compressed MessagePack (decoded by msgspec straight into `Access` objects, the
schema check), so loading costs in proportion to the distinct sequences, not to a run's
length. A type may carry the distribution of its objects' base addresses modulo the cache
line (`alignment`, issue 26; absent when unknown), which merging sums.
`dumps(profile, readable=True)` spells the same document out (`cachefit profile show
--json`); that form loads too. Version 1 (plain JSON) still loads, checked against its own
published schema (schemas/profile-v1.schema.json): its sequences have no kind (entry
None). Each version is checked once, by its schema, and the rules a schema cannot state
(a summary's one hit per access) by `check_type_profile`, which also checks a
`TypeProfile` built in code from data no loader read; the stages then trust the typed
objects. A name ending in ``.gz`` is written gzip-compressed. It does not trace, run
programs or print anything.
"""

from __future__ import annotations

import base64
import gzip
import inspect
import json
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import zstandard

from cachefit.atomic_files import save_output
from cachefit.errors import UserError
from cachefit.input_files import require_file
from cachefit.model.schema_check import first_error
from cachefit.model.type_names import type_key

FORMAT = "cachefit-profile"
VERSION = 2
"""The version `save` writes."""
VERSIONS = (1, 2)
"""The versions `load` reads."""
ZSTD_LEVEL = 10
"""zstd level of the packed sequences (bench/profile_format/RESULTS.md)."""

Mode = Literal["r", "w"]

# Top-level keys the format defines; anything else is kept as metadata.
_CORE_KEYS = ("format", "version", "cache_line", "invocations", "entry_invocations", "types")

_NonNeg = Annotated[int, msgspec.Meta(ge=0)]
_Pos = Annotated[int, msgspec.Meta(ge=1)]


class Access(msgspec.Struct, frozen=True, order=True, array_like=True):
    """One memory access: object role, byte offset into the object, size, read/write.

    A msgspec Struct (hashable, ordered like the tuple of its fields) so that packed
    sequences decode straight into it; it is `[role, offset, size, mode]` on the wire.
    An access touches at least one byte (no tracer records a zero-byte one:
    docs/profile-format.md)."""

    role: _NonNeg
    offset: _NonNeg
    size: _Pos
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

    def merge_key(self) -> tuple[str | None, tuple[Access, ...], bool]:
        """What `merge` adds up by: kind, accesses, literal or summary."""
        return (self.entry, self.accesses, self.hits is not None)


@dataclass(frozen=True)
class FieldSpan:
    """A data member as the profile stores it: name, byte offset, size in bytes."""

    name: str
    offset: int
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "offset": self.offset, "size": self.size}


@dataclass(frozen=True)
class SharedObject:
    """A distinct pattern of one object touched by more than one thread (issue 30): the
    byte ranges each thread read and wrote, threads numbered in the order the process saw
    them begin an invocation (0, 1, ...; no thread ids). `count` objects had it.

    `reads`/`writes` are (thread, offset, size) triples, ascending, ranges of one thread
    merged; offsets and sizes are multiples of the type's sharing granule, clipped to the
    type's size."""

    count: int
    reads: tuple[tuple[int, int, int], ...]
    writes: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Handoff:
    """Lines that may change hands between threads (issue 30): `count` times, a thread
    touched (read or wrote) the byte ranges `touched` of an object whose last writes, by
    another thread, covered `written` (writes by that thread since another thread last
    touched the object). For a layout, the lines that changed hands are the lines holding
    both some byte of `written` and some byte of `touched`. Ranges are (offset, size)
    pairs, ascending, merged, multiples of the sharing granule."""

    count: int
    written: tuple[tuple[int, int], ...]
    touched: tuple[tuple[int, int], ...]


@dataclass
class TypeSharing:
    """What the threads did to a type's objects (issue 30; docs/profile-format.md,
    version 3). Recorded at the end of each outermost invocation once a second thread
    has begun one; absent (None on TypeProfile) in single-threaded runs."""

    granule: int
    """Bytes per tracked unit of an object (a power of two, at least 1)."""
    threads: int
    """Threads that touched objects of the type while sharing was tracked."""
    private_objects: int = 0
    """Tracked objects only one thread touched."""
    shared: list[SharedObject] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    lost: int = 0
    """Objects or handoff patterns the runtime's tables had no room for."""


def _sequence_order(s: AccessSequence) -> tuple[Any, ...]:
    return (-s.count, len(s.accesses), s.accesses, s.entry or "", s.hits is not None,
            s.hits or ())


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
    alignment: dict[int, int] | None = None
    """Base address of the objects modulo the cache line -> how many (invocation, object)
    pairs had an object there (issue 26); None when unknown (version 1, the QEMU backend,
    runtimes before it). Keys ascending, counts >= 1."""
    alignment_line: int = 64
    """The modulus of `alignment`: the cache line of the profile holding the type (set
    when a profile is loaded, converted or merged)."""
    sharing: TypeSharing | None = None
    """Threads' sharing of the objects (issue 30); None for single-threaded runs and
    profiles before version 3."""

    @property
    def counted(self) -> int:
        """Invocations whose sequence for this type was recorded."""
        return sum(s.count for s in self.sequences)

    def kinds(self) -> dict[str | None, int]:
        """Counted invocations per kind of operation (entry; None for a version 1
        profile's), heaviest first, ties by name."""
        out: dict[str | None, int] = {}
        for s in self.sequences:
            out[s.entry] = out.get(s.entry, 0) + s.count
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0] or "")))

    def sort(self) -> None:
        """Heaviest sequence first; ties by the accesses, so output is deterministic."""
        self.sequences.sort(key=_sequence_order)

    def field_at(self, offset: int) -> FieldSpan | None:
        """The field whose bytes include `offset` (the last such for overlapping unions)."""
        hit = None
        for f in self.fields:
            if f.offset <= offset < f.offset + max(f.size, 1):
                hit = f
        return hit


@dataclass
class Profile:
    """A whole profile: types by qualified name, invocations per kind, run metadata."""

    types: dict[str, TypeProfile] = field(default_factory=dict)
    invocations: int = 0
    cache_line: int = 64
    metadata: dict[str, Any] = field(default_factory=dict)
    entry_invocations: dict[str, int] = field(default_factory=dict)
    """Invocations per kind of operation (entry function), all processes."""

    def name_of(self, name: str) -> str | None:
        """The profile's own name of the type `name` spells (`ring<int, 16>` is
        `ring<int,16>`, `struct item` is `item`: cachefit.model.type_names), None when it
        traced no such type."""
        key = type_key(name)
        return next((n for n in self.types if type_key(n) == key), None)

    def kind_invocations(self) -> dict[str, int]:
        """`entry_invocations`, or (a profile built before it was a core field) the
        metadata key of that name when it holds counts."""
        if self.entry_invocations:
            return dict(self.entry_invocations)
        legacy = self.metadata.get("entry_invocations")
        if isinstance(legacy, dict) and all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                and v >= 0 for k, v in legacy.items()):
            return dict(legacy)
        return {}

    def to_json(self, *, readable: bool = True) -> dict[str, Any]:
        """The version 2 document as Python data: sequences spelled out (`readable`), or
        packed as `save` writes them."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "cache_line": self.cache_line,
            "invocations": self.invocations,
            "entry_invocations": dict(sorted(self.kind_invocations().items())),
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
                "dropped": {"runaway": t.runaway, "outside_objects": t.outside_objects,
                            "table_full": t.table_full},
                **({} if t.alignment is None else
                   {"alignment": {str(k): v for k, v in sorted(t.alignment.items())}}),
                "sequences": ([_readable_sequence(s) for s in t.sequences] if readable
                              else _pack(t.sequences)),
            }
        out["types"] = types
        return out


# ---------------------------------------------------------------- the wire schema (v2)

class _Field(msgspec.Struct):
    name: str
    offset: _NonNeg
    size: _NonNeg


class _Dropped(msgspec.Struct):
    runaway: _NonNeg = 0
    outside_objects: _NonNeg = 0
    table_full: _NonNeg = 0


class _Sequence(msgspec.Struct):
    """A sequence in the readable form: {"count", "entry", "accesses", "hits"}."""

    count: _Pos
    accesses: tuple[Access, ...]
    entry: str | None = None
    hits: tuple[_Pos, ...] | None = None


class _PackedSequence(msgspec.Struct, array_like=True):
    """A sequence inside the packed form: [count, accesses, entry, hits]."""

    count: _Pos
    accesses: tuple[Access, ...]
    entry: str | None = None
    hits: tuple[_Pos, ...] | None = None


class _Type(msgspec.Struct):
    size: _NonNeg
    fields: list[_Field]
    sequences: bytes | list[_Sequence]
    dropped: _Dropped = msgspec.field(default_factory=_Dropped)
    alignment: dict[str, _Pos] | None = None


class _Document(msgspec.Struct):
    """A version 2 document; its JSON Schema is the published one (`json_schema`)."""

    format: Literal["cachefit-profile"]
    version: Literal[2]
    cache_line: _Pos
    invocations: _NonNeg
    entry_invocations: dict[str, _NonNeg]
    types: dict[str, _Type]


class _SequenceV1(msgspec.Struct):
    count: _Pos
    accesses: list[Access]


class _TypeV1(msgspec.Struct):
    size: _NonNeg
    sequences: list[_SequenceV1]
    fields: list[_Field] = msgspec.field(default_factory=list)
    dropped: _Dropped = msgspec.field(default_factory=_Dropped)


class _DocumentV1(msgspec.Struct):
    """A version 1 document as msgspec decodes it: the rules of SCHEMA_V1 (which names
    the first error), so that a large file is checked at msgspec's speed."""

    format: Literal["cachefit-profile"]
    version: Literal[1]
    cache_line: _Pos
    invocations: _NonNeg
    types: dict[str, _TypeV1]


_PACK = msgspec.msgpack.Encoder()
_UNPACK = msgspec.msgpack.Decoder(list[_PackedSequence])

SCHEMA = "profile.schema.json"
"""The published JSON Schema of a version 2 profile (cachefit/model/schemas/), generated
from the typed wire schema above by `json_schema`: what msgspec's typed decoding checks."""
SCHEMA_V1 = "profile-v1.schema.json"
"""The published JSON Schema of a version 1 profile (written by hand, with the messages of
its errors), checked with jsonschema (cachefit.model.schema_check)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a version 2 profile document (readable or packed sequences), as
    msgspec derives it from the types that decode it (tests compare it with SCHEMA)."""
    generated = _clean_descriptions(msgspec.json.schema(_Document))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://cachefit.invalid/schemas/profile.schema.json",
            "title": "cachefit profile, version 2 (docs/profile-format.md)", **generated}


def _clean_descriptions(node: Any) -> Any:
    """The schema with each `description` (a type's docstring) dedented as
    `inspect.cleandoc` does: msgspec 0.23 does so itself, 0.22 kept the indentation."""
    if isinstance(node, dict):
        return {k: inspect.cleandoc(v) if k == "description" and isinstance(v, str)
                else _clean_descriptions(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean_descriptions(v) for v in node]
    return node


def _readable_sequence(s: AccessSequence) -> dict[str, Any]:
    out: dict[str, Any] = {"count": s.count}
    if s.entry is not None:
        out["entry"] = s.entry
    out["accesses"] = [a.to_json() for a in s.accesses]
    if s.hits is not None:
        out["hits"] = list(s.hits)
    return out


def _pack(sequences: Sequence[AccessSequence]) -> str:
    """Sequences as base64 of zstd-compressed MessagePack ([count, accesses, entry, hits])."""
    payload = _PACK.encode([_PackedSequence(s.count, s.accesses, s.entry, s.hits)
                            for s in sequences])
    packed = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(payload)
    return base64.b64encode(packed).decode("ascii")


def unpack_payload(blob: bytes) -> bytes:
    """The MessagePack bytes of a packed `sequences` value (for tests and tools)."""
    return zstandard.ZstdDecompressor().decompress(blob)


# ---------------------------------------------------------------- writing

def dumps(profile: Profile, *, readable: bool = False) -> str:
    """The profile as version 2 JSON text, keys in a fixed order: packed sequences (what
    `save` writes), or with `readable` one line per sequence."""
    data = profile.to_json(readable=readable)
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
        lines.append(f'      "dropped": {json.dumps(t["dropped"])},')
        if "alignment" in t:
            lines.append(f'      "alignment": {json.dumps(t["alignment"])},')
        if readable:
            lines.append('      "sequences": [')
            for j, s in enumerate(t["sequences"]):
                comma = "," if j + 1 < len(t["sequences"]) else ""
                parts = [f'"count": {s["count"]}']
                if "entry" in s:
                    parts.append(f'"entry": {json.dumps(s["entry"])}')
                parts.append('"accesses": ' + json.dumps(s["accesses"], separators=(",", ":")))
                if "hits" in s:
                    parts.append('"hits": ' + json.dumps(s["hits"], separators=(",", ":")))
                lines.append("        {" + ", ".join(parts) + "}" + comma)
            lines.append("      ]")
        else:
            lines.append(f'      "sequences": {json.dumps(t["sequences"])}')
        lines.append("    }" + ("," if i + 1 < len(names) else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save(profile: Profile, path: str | os.PathLike[str]) -> None:
    """Write `profile` (version 2, packed) to `path` atomically; gzip when the name ends
    in `.gz`."""
    target = Path(path)
    text = dumps(profile).encode()
    payload = gzip.compress(text, mtime=0) if target.name.endswith(".gz") else text
    save_output(target, payload)


# ---------------------------------------------------------------- reading

def _bad(path: str, what: str) -> UserError:
    return UserError(f"{path}: not a valid cachefit profile: {what}",
                     "produce it with `cachefit trace` or `cachefit profile merge`")


def from_json(data: Any, path: str = "<profile>") -> Profile:
    """Validate a decoded profile document (version 1 or 2) and build a Profile; raise
    UserError naming what is wrong."""
    if not isinstance(data, dict):
        raise _bad(path, "the top level is not an object")
    if data.get("format") != FORMAT:
        raise _bad(path, f'"format" is not "{FORMAT}"')
    version = data.get("version")
    if version not in VERSIONS or isinstance(version, bool):
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        raise UserError(f"{path}: profile format version {version!r} is not supported "
                        f"(this cachefit reads versions {', '.join(map(str, VERSIONS))})",
                        "upgrade cachefit to read it" if newer else
                        "retrace with this version of cachefit")
    if version == 1:
        return _from_json_v1(data, path)
    return _from_json_v2(data, path)


def _from_json_v2(data: dict[str, Any], path: str) -> Profile:
    try:
        doc = msgspec.convert(data, _Document)
    except msgspec.ValidationError as exc:
        raise _bad(path, str(exc)) from exc
    types: dict[str, TypeProfile] = {}
    for name, t in doc.types.items():
        where = f"$.types[{name!r}].sequences"
        seqs: list[AccessSequence]
        if isinstance(t.sequences, bytes):
            try:
                packed = _UNPACK.decode(unpack_payload(t.sequences))
            except zstandard.ZstdError as exc:
                raise _bad(path, f"{where}: corrupt or truncated zstd data ({exc})") from exc
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                raise _bad(path, f"{where}: {exc}") from exc
            seqs = [AccessSequence(s.count, s.accesses, s.entry, s.hits) for s in packed]
        else:
            seqs = [AccessSequence(s.count, s.accesses, s.entry, s.hits) for s in t.sequences]
        types[name] = TypeProfile(
            name=name, size=t.size,
            fields=[FieldSpan(f.name, f.offset, f.size) for f in t.fields], sequences=seqs,
            runaway=t.dropped.runaway, outside_objects=t.dropped.outside_objects,
            table_full=t.dropped.table_full,
            alignment=_alignment(t.alignment, doc.cache_line, path,
                                 f"$.types[{name!r}].alignment"),
            alignment_line=doc.cache_line)
        broken = _broken_rule(types[name])
        if broken is not None:
            raise _bad(path, f"$.types[{name!r}].{broken}")
    metadata = {k: v for k, v in data.items() if k not in _CORE_KEYS}
    return Profile(types=types, invocations=doc.invocations, cache_line=doc.cache_line,
                   metadata=metadata, entry_invocations=dict(doc.entry_invocations))


def _alignment(raw: dict[str, int] | None, cache_line: int, path: str,
               where: str) -> dict[int, int] | None:
    """A type's `alignment` object ({"48": 1000}) as {48: 1000}, sorted: keys are
    decimal numbers (that they are offsets within the cache line: `_broken_rule`)."""
    if raw is None:
        return None
    out: dict[int, int] = {}
    for key, count in raw.items():
        if not key.isdigit() or str(int(key)) != key:
            raise _bad(path, f"{where}: {key!r} is not an offset in [0, {cache_line})")
        out[int(key)] = count
    return dict(sorted(out.items()))


def _from_json_v1(data: dict[str, Any], path: str) -> Profile:
    doc = _checked_v1(data, path)
    types = {name: _type_v1(name, t) for name, t in doc.types.items()}
    metadata = {k: v for k, v in data.items() if k not in _CORE_KEYS}
    # Version 1 kept the per-entry counts as metadata (ignored unless they are counts).
    legacy = Profile(metadata={"entry_invocations": data.get("entry_invocations")})
    return Profile(types=types, invocations=doc.invocations, cache_line=doc.cache_line,
                   metadata=metadata, entry_invocations=legacy.kind_invocations())


def _checked_v1(data: dict[str, Any], path: str) -> _DocumentV1:
    """`data` checked against the version 1 schema, once: decoded by the types that hold
    its rules; when they refuse it, SCHEMA_V1 names the first error (in profile order)."""
    try:
        return msgspec.convert(data, _DocumentV1)
    except msgspec.ValidationError as exc:
        error = first_error(SCHEMA_V1, data)
        raise _bad(path, error.message if error is not None else str(exc)) from exc


def _type_v1(name: str, t: _TypeV1) -> TypeProfile:
    """A checked version 1 type entry as a TypeProfile (no check left to make: a version 1
    sequence is literal, so `check_type_profile`'s rules hold)."""
    return TypeProfile(
        name=name, size=t.size, fields=[FieldSpan(f.name, f.offset, f.size) for f in t.fields],
        sequences=[AccessSequence(s.count, tuple(s.accesses)) for s in t.sequences],
        runaway=t.dropped.runaway, outside_objects=t.dropped.outside_objects,
        table_full=t.dropped.table_full)


def type_from_json(name: str, t: Any, path: str = "<profile>") -> TypeProfile:
    """One type entry of a version 1 profile (`size`, `fields`, `sequences` as lists of
    `{"count", "accesses"}`, `dropped`) as a TypeProfile, checked like the entry `name`
    of a version 1 file; its sequences have no kind."""
    doc = _checked_v1({"format": FORMAT, "version": 1, "cache_line": 1, "invocations": 0,
                       "types": {name: t}}, path)
    return _type_v1(name, doc.types[name])


_ACCESS_PARTS = ("role", "offset", "size", "mode")


def check_type_profile(tp: Any) -> None:
    """Check a TypeProfile built in code from data no loader read (the loaders check what
    they read): against the format (the typed decoding of a type entry, the published
    schema) and the rules a schema cannot state; a UserError "malformed profile entry:
    ..." naming the first thing wrong, in profile order."""
    if not isinstance(tp, TypeProfile):
        raise _malformed(f"the type entry must be a TypeProfile, not {type(tp).__name__}")
    entry = {
        "size": tp.size,
        "fields": [{"name": f.name, "offset": f.offset, "size": f.size} for f in tp.fields],
        "sequences": [{"count": s.count, "accesses": [list(a.to_json()) for a in s.accesses],
                       "entry": s.entry, "hits": None if s.hits is None else list(s.hits)}
                      for s in tp.sequences] if isinstance(tp.sequences, list)
        else tp.sequences,
        "dropped": {"runaway": tp.runaway, "outside_objects": tp.outside_objects,
                    "table_full": tp.table_full},
        "alignment": None if tp.alignment is None else
        {str(k): v for k, v in tp.alignment.items()},
    }
    try:
        msgspec.convert(entry, _Type)
    except msgspec.ValidationError as exc:     # `accesses[1][2]` is `accesses[1] size`
        raise _malformed(re.sub(r"(accesses\[\d+\])\[(\d)\]",
                                lambda m: f"{m[1]} {_ACCESS_PARTS[int(m[2])]}",
                                str(exc))) from exc
    broken = _broken_rule(tp)
    if broken is not None:
        raise _malformed(broken)


def _broken_rule(tp: TypeProfile) -> str | None:
    """The first rule of the format that a schema cannot state and `tp` breaks (where and
    what), None when it keeps them: a summary has one hit count per access, and the
    alignment's offsets are within the cache line."""
    for i, s in enumerate(tp.sequences):
        if s.hits is not None and len(s.hits) != len(s.accesses):
            return (f"sequences[{i}]: a summary needs one hit count per access "
                    f"({len(s.hits)} for {len(s.accesses)})")
    for offset in tp.alignment or {}:
        if not 0 <= offset < tp.alignment_line:
            return (f"alignment: {str(offset)!r} is not an offset in "
                    f"[0, {tp.alignment_line})")
    return None


def _malformed(what: str) -> UserError:
    return UserError(f"malformed profile entry: {what}", "regenerate it with `cachefit profile`")


def loads(raw: bytes, path: str = "<profile>") -> Profile:
    """A profile from the bytes of a file (JSON, maybe gzipped), validated."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise _bad(path, "corrupt or truncated gzip data") from exc
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise _bad(path, f"invalid JSON ({exc})") from exc
    return from_json(data, path)


def load(path: str | os.PathLike[str]) -> Profile:
    """Read a profile file (version 1 or 2, plain or gzipped) and validate it."""
    p = Path(path)
    require_file(p, "run `cachefit trace -o FILE -- COMMAND`", "profile")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror}") from exc
    return loads(raw, str(p))


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
