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
line (`alignment`, issue 26; absent when unknown), which merging sums. Version 3 (issue
30) is version 2 plus an optional per-type `sharing` (what the threads did to the type's
objects: `TypeSharing`), its lists packed like the sequences; it is written only when
some type has sharing, so a profile without any is written as version 2, byte for byte.
`dumps(profile, readable=True)` spells the same document out (`cachefit profile show
--json`); that form loads too. Version 1 (plain JSON) still loads, checked against its own
published schema (schemas/profile-v1.schema.json): its sequences have no kind (entry
None). Each version is checked once, by its schema, and the rules a schema cannot state
(a summary's one hit per access, sharing ranges inside the type and on its granules) by
`check_type_profile`, which also checks a `TypeProfile` built in code from data no loader
read; the stages then trust the typed objects. A name ending in ``.gz`` is written
gzip-compressed. It does not trace, run programs or print anything.
"""

from __future__ import annotations

import base64
import gzip
import inspect
import json
import os
import re
import zlib
from collections.abc import Iterable, Sequence
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
VERSION = 3
"""The newest version: `save` writes it when some type has `sharing`, else version 2
(`Profile.version`)."""
VERSIONS = (1, 2, 3)
"""The versions `load` reads."""
ZSTD_LEVEL = 6
"""zstd level of the packed sequences and sharing lists (bench/profile_format/RESULTS.md)."""

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

    def pattern(self) -> tuple[tuple[tuple[int, int, int], ...], tuple[tuple[int, int, int], ...]]:
        """What `merge` adds up by: the reads and writes."""
        return (self.reads, self.writes)

    def threads(self) -> tuple[int, ...]:
        """The thread numbers that read or wrote the object, ascending."""
        return tuple(sorted({t for t, _, _ in self.reads + self.writes}))


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

    def pattern(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
        """What `merge` adds up by: the written and touched ranges."""
        return (self.written, self.touched)


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

    @property
    def shared_objects(self) -> int:
        """Tracked objects more than one thread touched (the patterns' counts)."""
        return sum(o.count for o in self.shared)

    def sort(self) -> None:
        """Heaviest pattern and handoff first; ties by their ranges (deterministic)."""
        self.shared.sort(key=lambda o: (-o.count, o.reads, o.writes))
        self.handoffs.sort(key=lambda h: (-h.count, h.written, h.touched))


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

    def fields_overlapping(self, ranges: Iterable[tuple[int, int]]) -> list[FieldSpan]:
        """The fields (in profile order) with a byte inside some (offset, size) range,
        such as a handoff's `written` or `touched`: a field overlapping a range counts as
        touched (a field of no bytes counts when its offset is inside)."""
        spans = [(o, o + n) for o, n in ranges]
        return [f for f in self.fields
                if any(f.offset < end and start < f.offset + max(f.size, 1)
                       for start, end in spans)]


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

    def version(self) -> int:
        """The version the profile is written as: 3 when some type has `sharing`, else 2
        (what every profile was before version 3)."""
        return 3 if any(t.sharing is not None for t in self.types.values()) else 2

    def to_json(self, *, readable: bool = True) -> dict[str, Any]:
        """The document (version 2 or 3: `version`) as Python data: sequences and sharing
        lists spelled out (`readable`), or packed as `save` writes them."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": self.version(),
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
                **({} if t.sharing is None else
                   {"sharing": _sharing_json(t.sharing, readable=readable)}),
                "sequences": ([_readable_sequence(s) for s in t.sequences] if readable
                              else _pack(t.sequences)),
            }
        out["types"] = types
        return out


# ---------------------------------------------------------------- the wire schema (v2, v3)

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


_ThreadRange = tuple[_NonNeg, _NonNeg, _Pos]
"""[thread, offset, size] of a shared object's reads or writes."""
_Range = tuple[_NonNeg, _Pos]
"""[offset, size] of a handoff's written or touched bytes."""


class _SharedObject(msgspec.Struct):
    """A shared object pattern in the readable form: {"count", "reads", "writes"}."""

    count: _Pos
    reads: tuple[_ThreadRange, ...]
    writes: tuple[_ThreadRange, ...]


class _PackedSharedObject(msgspec.Struct, array_like=True):
    """A shared object pattern inside the packed form: [count, reads, writes]."""

    count: _Pos
    reads: tuple[_ThreadRange, ...]
    writes: tuple[_ThreadRange, ...]


class _Handoff(msgspec.Struct):
    """A handoff in the readable form: {"count", "written", "touched"}."""

    count: _Pos
    written: tuple[_Range, ...]
    touched: tuple[_Range, ...]


class _PackedHandoff(msgspec.Struct, array_like=True):
    """A handoff inside the packed form: [count, written, touched]."""

    count: _Pos
    written: tuple[_Range, ...]
    touched: tuple[_Range, ...]


class _Sharing(msgspec.Struct):
    """What the threads did to a type's objects (version 3): `shared` and `handoffs`
    spelled out, or packed like the sequences."""

    granule: _Pos
    threads: _NonNeg
    private_objects: _NonNeg = 0
    lost: _NonNeg = 0
    shared: bytes | list[_SharedObject] = msgspec.field(default_factory=list)
    handoffs: bytes | list[_Handoff] = msgspec.field(default_factory=list)


class _TypeV3(_Type):
    """A type entry of version 3: version 2's and, optionally, its sharing."""

    sharing: _Sharing | None = None


class _Head(msgspec.Struct, tag_field="version"):
    format: Literal["cachefit-profile"]
    cache_line: _Pos
    invocations: _NonNeg
    entry_invocations: dict[str, _NonNeg]


class _Document(_Head, tag=2):
    """A version 2 document."""

    types: dict[str, _Type]


class _DocumentV3(_Head, tag=3):
    """A version 3 document: version 2 with the types' sharing."""

    types: dict[str, _TypeV3]


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
_UNPACK_SHARED = msgspec.msgpack.Decoder(list[_PackedSharedObject])
_UNPACK_HANDOFFS = msgspec.msgpack.Decoder(list[_PackedHandoff])

SCHEMA = "profile.schema.json"
"""The published JSON Schema of a version 2 or 3 profile (cachefit/model/schemas/),
generated from the typed wire schema above by `json_schema`: what msgspec's typed
decoding checks (the `version` says which of the two documents applies)."""
SCHEMA_V1 = "profile-v1.schema.json"
"""The published JSON Schema of a version 1 profile (written by hand, with the messages of
its errors), checked with jsonschema (cachefit.model.schema_check)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a version 2 or 3 profile document (readable or packed), as
    msgspec derives it from the types that decode it (tests compare it with SCHEMA)."""
    # Through JSON, as the file holds it (the version tags map from strings there).
    generated = json.loads(msgspec.json.encode(
        _clean_descriptions(msgspec.json.schema(_Document | _DocumentV3))))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://cachefit.invalid/schemas/profile.schema.json",
            "title": "cachefit profile, version 2 or 3 (docs/profile-format.md)", **generated}


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
    return _packed([_PackedSequence(s.count, s.accesses, s.entry, s.hits) for s in sequences])


def _packed(items: list[Any]) -> str:
    """A list of array-like Structs as base64 of zstd-compressed MessagePack."""
    packed = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(_PACK.encode(items))
    return base64.b64encode(packed).decode("ascii")


def _sharing_json(s: TypeSharing, *, readable: bool) -> dict[str, Any]:
    """A type's `sharing` entry: its lists spelled out (`readable`) or packed."""
    s.sort()
    out: dict[str, Any] = {"granule": s.granule, "threads": s.threads,
                           "private_objects": s.private_objects, "lost": s.lost}
    if readable:
        out["shared"] = [{"count": o.count, "reads": [list(r) for r in o.reads],
                          "writes": [list(w) for w in o.writes]} for o in s.shared]
        out["handoffs"] = [{"count": h.count, "written": [list(r) for r in h.written],
                            "touched": [list(r) for r in h.touched]} for h in s.handoffs]
    else:
        out["shared"] = _packed([_PackedSharedObject(o.count, o.reads, o.writes)
                                 for o in s.shared])
        out["handoffs"] = _packed([_PackedHandoff(h.count, h.written, h.touched)
                                   for h in s.handoffs])
    return out


def unpack_payload(blob: bytes) -> bytes:
    """The MessagePack bytes of a packed `sequences` value (for tests and tools)."""
    return zstandard.ZstdDecompressor().decompress(blob)


# ---------------------------------------------------------------- writing

def dumps(profile: Profile, *, readable: bool = False) -> str:
    """The profile as JSON text (version 2, or 3 when some type has sharing), keys in a
    fixed order: packed sequences and sharing lists (what `save` writes), or with
    `readable` one line per sequence, shared object pattern and handoff."""
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
        if "sharing" in t:
            lines.extend(_sharing_lines(t["sharing"]))
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


def _sharing_lines(sharing: dict[str, Any]) -> list[str]:
    """The lines of a type's `sharing` entry (from `_sharing_json`): one per counter, one
    per shared object pattern and handoff, or the packed strings."""
    compact = (",", ":")
    lines = ['      "sharing": {']
    lines += [f'        "{k}": {sharing[k]},'
              for k in ("granule", "threads", "private_objects", "lost")]
    for key, parts, last in (("shared", ("reads", "writes"), False),
                             ("handoffs", ("written", "touched"), True)):
        end = "" if last else ","
        items = sharing[key]
        if isinstance(items, str):
            lines.append(f'        "{key}": {json.dumps(items)}{end}')
            continue
        lines.append(f'        "{key}": [' + ("" if items else f"]{end}"))
        for j, item in enumerate(items):
            comma = "," if j + 1 < len(items) else ""
            fields = [f'"count": {item["count"]}'] + [
                f'"{p}": {json.dumps(item[p], separators=compact)}' for p in parts]
            lines.append("          {" + ", ".join(fields) + "}" + comma)
        if items:
            lines.append(f"        ]{end}")
    lines.append("      },")
    return lines


def save(profile: Profile, path: str | os.PathLike[str]) -> None:
    """Write `profile` (version 2, or 3 when some type has sharing; packed) to `path`
    atomically; gzip when the name ends in `.gz`."""
    target = Path(path)
    text = dumps(profile).encode()
    payload = gzip.compress(text, mtime=0) if target.name.endswith(".gz") else text
    save_output(target, payload)


# ---------------------------------------------------------------- reading

def _bad(path: str, what: str) -> UserError:
    return UserError(f"{path}: not a valid cachefit profile: {what}",
                     "produce it with `cachefit trace` or `cachefit profile merge`")


def from_json(data: Any, path: str = "<profile>") -> Profile:
    """Validate a decoded profile document (version 1, 2 or 3) and build a Profile; raise
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


def _unpacked(blob: bytes, decoder: msgspec.msgpack.Decoder[Any], path: str,
              where: str) -> Any:
    """The list a packed string holds, decoded (and so checked) by `decoder`."""
    try:
        return decoder.decode(unpack_payload(blob))
    except zstandard.ZstdError as exc:
        raise _bad(path, f"{where}: corrupt or truncated zstd data ({exc})") from exc
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _bad(path, f"{where}: {exc}") from exc


def _sharing(raw: _Sharing, path: str, where: str) -> TypeSharing:
    """A decoded `sharing` entry as a TypeSharing (its packed lists unpacked)."""
    shared = (_unpacked(raw.shared, _UNPACK_SHARED, path, f"{where}.shared")
              if isinstance(raw.shared, bytes) else raw.shared)
    handoffs = (_unpacked(raw.handoffs, _UNPACK_HANDOFFS, path, f"{where}.handoffs")
                if isinstance(raw.handoffs, bytes) else raw.handoffs)
    return TypeSharing(
        granule=raw.granule, threads=raw.threads, private_objects=raw.private_objects,
        shared=[SharedObject(o.count, o.reads, o.writes) for o in shared],
        handoffs=[Handoff(h.count, h.written, h.touched) for h in handoffs], lost=raw.lost)


def _from_json_v2(data: dict[str, Any], path: str) -> Profile:
    """A version 2 or 3 document (the `version` picks the wire type) as a Profile."""
    try:
        doc = msgspec.convert(data, _Document | _DocumentV3)
    except msgspec.ValidationError as exc:
        raise _bad(path, str(exc)) from exc
    types: dict[str, TypeProfile] = {}
    for name, t in doc.types.items():
        where = f"$.types[{name!r}]"
        seqs: list[AccessSequence]
        if isinstance(t.sequences, bytes):
            packed = _unpacked(t.sequences, _UNPACK, path, f"{where}.sequences")
            seqs = [AccessSequence(s.count, s.accesses, s.entry, s.hits) for s in packed]
        else:
            seqs = [AccessSequence(s.count, s.accesses, s.entry, s.hits) for s in t.sequences]
        sharing = t.sharing if isinstance(t, _TypeV3) else None
        types[name] = TypeProfile(
            name=name, size=t.size,
            fields=[FieldSpan(f.name, f.offset, f.size) for f in t.fields], sequences=seqs,
            runaway=t.dropped.runaway, outside_objects=t.dropped.outside_objects,
            table_full=t.dropped.table_full,
            alignment=_alignment(t.alignment, doc.cache_line, path, f"{where}.alignment"),
            alignment_line=doc.cache_line,
            sharing=None if sharing is None else _sharing(sharing, path, f"{where}.sharing"))
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
        "sharing": _sharing_entry(tp.sharing),
    }
    try:
        msgspec.convert(entry, _TypeV3)
    except msgspec.ValidationError as exc:     # `accesses[1][2]` is `accesses[1] size`
        raise _malformed(re.sub(r"(accesses\[\d+\])\[(\d)\]",
                                lambda m: f"{m[1]} {_ACCESS_PARTS[int(m[2])]}",
                                str(exc))) from exc
    broken = _broken_rule(tp)
    if broken is not None:
        raise _malformed(broken)


def _sharing_entry(sharing: Any) -> Any:
    """A TypeSharing as its readable wire entry (anything else as it is, for the typed
    decoding to refuse)."""
    if not isinstance(sharing, TypeSharing):
        return sharing

    def items(values: Any, parts: tuple[str, str]) -> Any:
        if not isinstance(values, list):
            return values
        return [{"count": v.count, **{p: getattr(v, p) for p in parts}}
                if isinstance(v, SharedObject | Handoff) else v for v in values]

    return {"granule": sharing.granule, "threads": sharing.threads,
            "private_objects": sharing.private_objects, "lost": sharing.lost,
            "shared": items(sharing.shared, ("reads", "writes")),
            "handoffs": items(sharing.handoffs, ("written", "touched"))}


def _broken_rule(tp: TypeProfile) -> str | None:
    """The first rule of the format that a schema cannot state and `tp` breaks (where and
    what), None when it keeps them: a summary has one hit count per access, the
    alignment's offsets are within the cache line, and the sharing's rules hold
    (`_broken_sharing`)."""
    for i, s in enumerate(tp.sequences):
        if s.hits is not None and len(s.hits) != len(s.accesses):
            return (f"sequences[{i}]: a summary needs one hit count per access "
                    f"({len(s.hits)} for {len(s.accesses)})")
    for offset in tp.alignment or {}:
        if not 0 <= offset < tp.alignment_line:
            return (f"alignment: {str(offset)!r} is not an offset in "
                    f"[0, {tp.alignment_line})")
    if tp.sharing is not None:
        broken = _broken_sharing(tp.sharing, tp.size)
        if broken is not None:
            return f"sharing{broken}"
    return None


def _broken_sharing(s: TypeSharing, size: int) -> str | None:
    """The first sharing rule `s` breaks for a type of `size` bytes (where, from
    `.granule` on, and what): the granule is a power of two; every range is a run of
    granules inside the type (its end a granule boundary or the type's end; a type of
    size 0 has an unknown layout, so only the granules are checked), ascending
    and merged (a thread's ranges apart, in a shared object); thread numbers are below
    `threads`; a shared object has two threads or more, a handoff written and touched
    bytes."""
    g = s.granule
    if g & (g - 1):
        return f".granule: {g} is not a power of two"
    for i, o in enumerate(s.shared):
        for part, triples in (("reads", o.reads), ("writes", o.writes)):
            for j, (thread, offset, n) in enumerate(triples):
                where = f".shared[{i}].{part}[{j}]"
                if thread >= s.threads:
                    return f"{where}: thread {thread} is not below threads ({s.threads})"
                bad = _bad_range(offset, n, g, size)
                if bad is not None:
                    return f"{where}: {bad}"
                if j and (triples[j - 1][0], sum(triples[j - 1][1:])) >= (thread, offset):
                    return (f"{where}: not after the range before it (a thread's ranges "
                            "ascending, apart, joined when they touch)")
        threads = o.threads()
        if len(threads) < 2:
            return (f".shared[{i}]: touched by "
                    f"{f'thread {threads[0]} only' if threads else 'no thread'} "
                    "(a shared object has two threads or more)")
    for i, h in enumerate(s.handoffs):
        for part, pairs in (("written", h.written), ("touched", h.touched)):
            if not pairs:
                return f".handoffs[{i}].{part}: no bytes (a handoff has some)"
            for j, (offset, n) in enumerate(pairs):
                where = f".handoffs[{i}].{part}[{j}]"
                bad = _bad_range(offset, n, g, size)
                if bad is not None:
                    return f"{where}: {bad}"
                if j and sum(pairs[j - 1]) >= offset:
                    return (f"{where}: not after the range before it (ranges ascending, "
                            "apart, joined when they touch)")
    return None


def _bad_range(offset: int, n: int, granule: int, size: int) -> str | None:
    """What is wrong with the byte range [offset, offset + n) of a sharing entry: a run
    of `granule`-byte granules clipped to the `size`-byte type (size 0: the layout is
    unknown, nothing to clip to); None when nothing."""
    end = offset + n
    if size and end > size:
        return f"bytes [{offset}, {end}) are not inside the {size}-byte type"
    if offset % granule or (end % granule and end != size):
        return (f"bytes [{offset}, {end}) are not a run of {granule}-byte granules "
                "(ending at one or at the end of the type)")
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
    """Read a profile file (version 1, 2 or 3, plain or gzipped) and validate it."""
    p = Path(path)
    require_file(p, "run `cachefit trace -o FILE -- COMMAND`", "profile")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {p}: {exc.strerror}") from exc
    return loads(raw, str(p))


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
