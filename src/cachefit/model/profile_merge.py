"""Merging cachefit profiles: `merge` adds up profiles traced against the same layouts,
`merge_metadata` combines their run metadata (docs/profile-format.md, *Merging*).

Merging is exact and associative: identical sequences (same kind, accesses and
literal/summary) have their counts and hits summed, and so have identical shared object
patterns and handoffs of the threads' sharing (issue 30). It works on the typed objects of
cachefit.model.profile; it does not read or write files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cachefit.errors import UserError
from cachefit.model.profile import (
    Access,
    AccessSequence,
    Handoff,
    Profile,
    SharedObject,
    TypeProfile,
    TypeSharing,
    now_iso,
)


def _same_layout(a: TypeProfile, b: TypeProfile) -> bool:
    return a.size == b.size and a.fields == b.fields


def merge(profiles: Sequence[Profile], *, names: Sequence[str] = ()) -> Profile:
    """Sum the counts (and a summary's hits) of identical sequences, the invocations
    (per kind too), the drops and the alignment counts of all profiles (a type's
    alignment is unknown only when it is unknown in every input). Sequences are
    identical when kind, accesses and literal/summary agree, so merging is exact and
    associative. A type's sharing is merged by `_SharingSum` (none only when no input
    has one).

    The layouts of a type must agree: a profile traced against another layout of the
    same type cannot be added, nor sharing tracked with another granule. `names` (the
    inputs' file names) only improve messages.
    """
    if not profiles:
        raise UserError("nothing to merge", "name at least one profile")
    cache_line = profiles[0].cache_line
    out = Profile(cache_line=cache_line)
    buckets: dict[str, dict[tuple[str | None, tuple[Access, ...], bool],
                            tuple[int, list[int] | None]]] = {}
    kinds: dict[str, int] = {}
    sharing: dict[str, _SharingSum] = {}
    for i, prof in enumerate(profiles):
        label = names[i] if i < len(names) else f"profile {i + 1}"
        if prof.cache_line != cache_line:
            raise UserError(f"{label}: cache line {prof.cache_line} differs from {cache_line}",
                            "merge profiles made for the same machine")
        out.invocations += prof.invocations
        for entry, n in prof.kind_invocations().items():
            kinds[entry] = kinds.get(entry, 0) + n
        for name, t in prof.types.items():
            have = out.types.get(name)
            if have is None:
                have = out.types[name] = TypeProfile(name, t.size, list(t.fields),
                                                     alignment_line=cache_line)
                buckets[name] = {}
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
            if t.alignment is not None:
                got_align = have.alignment if have.alignment is not None else {}
                for mod, n in t.alignment.items():
                    got_align[mod] = got_align.get(mod, 0) + n
                have.alignment = dict(sorted(got_align.items()))
            if t.sharing is not None:
                got_sharing = sharing.get(name)
                if got_sharing is None:
                    sharing[name] = _SharingSum(t.sharing)
                else:
                    got_sharing.add(t.sharing, f"{label}: type {name}")
            bucket = buckets[name]
            for s in t.sequences:
                key = s.merge_key()
                got = bucket.get(key)
                if got is None:
                    bucket[key] = (s.count, list(s.hits) if s.hits is not None else None)
                else:
                    hits = got[1]
                    if hits is not None and s.hits is not None:
                        hits = [a + b for a, b in zip(hits, s.hits, strict=True)]
                    bucket[key] = (got[0] + s.count, hits)
    for name, bucket in buckets.items():
        out.types[name].sequences = [
            AccessSequence(count, acc, entry, tuple(hits) if hits is not None else None)
            for (entry, acc, _summary), (count, hits) in bucket.items()]
        out.types[name].sort()
    for name, total in sharing.items():
        out.types[name].sharing = total.result()
    out.entry_invocations = kinds
    out.metadata = merge_metadata([p.metadata for p in profiles])
    return out


class _SharingSum:
    """The sharing of one type added up over profiles: identical shared object patterns
    and handoffs (same ranges) have their counts summed, `private_objects` and `lost`
    are summed, `threads` is the largest (threads are numbered from 0 in every run), and
    the granule must agree."""

    def __init__(self, first: TypeSharing) -> None:
        self.granule = first.granule
        self.threads = 0
        self.private_objects = 0
        self.lost = 0
        self.shared: dict[Any, int] = {}
        self.handoffs: dict[Any, int] = {}
        self.add(first, "")

    def add(self, s: TypeSharing, where: str) -> None:
        if s.granule != self.granule:
            raise UserError(f"{where}: sharing was tracked in granules of {s.granule} "
                            f"bytes, not {self.granule} as in the profiles before it",
                            "merge profiles traced by the same cachefit runtime")
        self.threads = max(self.threads, s.threads)
        self.private_objects += s.private_objects
        self.lost += s.lost
        for o in s.shared:
            self.shared[o.pattern()] = self.shared.get(o.pattern(), 0) + o.count
        for h in s.handoffs:
            self.handoffs[h.pattern()] = self.handoffs.get(h.pattern(), 0) + h.count

    def result(self) -> TypeSharing:
        out = TypeSharing(
            self.granule, self.threads, self.private_objects,
            [SharedObject(n, reads, writes) for (reads, writes), n in self.shared.items()],
            [Handoff(n, written, touched) for (written, touched), n in self.handoffs.items()],
            self.lost)
        out.sort()
        return out


def merge_metadata(metas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Combine run metadata: lists are concatenated (without repeats), numbers in
    `overhead` summed, the backend and instrumentation kept when all agree, the date set
    to now. The runtime's counters are summed per type and counter (issue 26): `guards`
    (`types` -> name -> `objects`/`distinct`, and `deep`), `registered` (objects per
    type; left out when an input lacks it, as then the total is unknown) and `reused`
    (objects per type whose memory was reused unseen; an input without it had none).
    `unconverted_sites` (per program, from its blob) is kept when every input has it."""
    commands: list[Any] = []
    entries: list[str] = []
    programs: list[str] = []
    backends: set[str] = set()
    instrumentation: set[str] = set()
    overhead: dict[str, float] = {}
    guard_types: dict[str, dict[str, int]] = {}
    deep = 0
    registered: dict[str, int] | None = {}
    reused: dict[str, int] = {}
    unconverted: dict[str, int] | None = {}
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
        instr = m.get("instrumentation")
        for i in ([instr] if isinstance(instr, str) else
                  instr if isinstance(instr, list) else []):
            if isinstance(i, str):
                instrumentation.add(i)
        guards = m.get("guards")
        if isinstance(guards, dict):
            per_type = guards.get("types")
            for name, g in (per_type.items() if isinstance(per_type, dict) else ()):
                if isinstance(g, dict):
                    got = guard_types.setdefault(name, {})
                    for k, v in g.items():
                        if _is_count(v):
                            got[k] = got.get(k, 0) + v
            if _is_count(guards.get("deep")):
                deep += guards["deep"]
        counts = m.get("registered")
        if registered is not None and isinstance(counts, dict):
            for name, n in counts.items():
                if _is_count(n):
                    registered[name] = registered.get(name, 0) + n
        else:
            registered = None
        sites = m.get("unconverted_sites")
        if unconverted is not None and isinstance(sites, dict):
            for prog, n in sites.items():
                if _is_count(n):
                    unconverted[prog] = max(unconverted.get(prog, 0), n)
        else:
            unconverted = None
        counts = m.get("reused")
        for name, n in (counts.items() if isinstance(counts, dict) else ()):
            if _is_count(n) and n > 0:
                reused[name] = reused.get(name, 0) + n
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
    if instrumentation:
        meta["instrumentation"] = (instrumentation.pop() if len(instrumentation) == 1
                                   else sorted(instrumentation))
    guards_out: dict[str, Any] = {}
    if guard_types:
        guards_out["types"] = dict(sorted(guard_types.items()))
    if deep:
        guards_out["deep"] = deep
    if guards_out:
        meta["guards"] = guards_out
    if registered is not None:
        meta["registered"] = dict(sorted(registered.items()))
    if reused:
        meta["reused"] = dict(sorted(reused.items()))
    if unconverted is not None:
        meta["unconverted_sites"] = dict(sorted(unconverted.items()))
    return meta


def _is_count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
