"""Read one type of a cachefit profile into per-sequence, per-role field footprints.

Input is the profile's typed `TypeProfile` (cachefit.model.profile, which alone
reads the file). Every sequence is one weighted item: a literal sequence and a summary of
long invocations alike (a summary's footprint is its distinct accesses, exactly as a
literal sequence's), with its count and kind of operation (entry). Accesses are mapped to
fields by byte overlap with the layout stored in the profile (the layout at trace time),
then matched to the current record by field name; each distinct access of the type is
mapped once and a sequence's footprint is the union over its distinct accesses
(`access_sets`), so the time goes with the distinct accesses and footprints, not with the
length of the summaries (issue 26). The result says, for every sequence and object role,
which fields were touched and which written (sequences with equal footprints share the
objects), plus the access widths per field (for relaxed alignment). Accesses to the fixed
area before the first field (vptr, bases) are kept as byte spans. This module does not look
at cache lines or choose layouts, and does not check the profile: it trusts the typed
objects (cachefit.model.profile checks them once, when loading a file, or with
`check_type_profile` for one built in code from data no loader read).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cachefit.layout.access_sets import access_table
from cachefit.model.profile import Access, TypeProfile
from cachefit.model.record_layout import Record

Span = tuple[int, int]


@dataclass(frozen=True)
class RoleFootprint:
    """What one object role touched in one sequence: field names and fixed-area byte spans."""

    touched: frozenset[str]
    written: frozenset[str]
    fixed_touched: tuple[Span, ...] = ()
    fixed_written: tuple[Span, ...] = ()

    def includes(self, other: RoleFootprint) -> bool:
        """Whether `other`'s touched fields and fixed spans are all in this footprint."""
        return other.touched <= self.touched and all(
            any(b <= ob and oe <= e for b, e in self.fixed_touched)
            for ob, oe in other.fixed_touched)


@dataclass(frozen=True)
class SequenceFootprint:
    """One recorded sequence (or summary): its index in the profile, its count (or weight,
    once the layout problem has weighed it), its roles' footprints and its kind."""

    index: int
    count: int
    roles: tuple[tuple[str, RoleFootprint], ...]
    entry: str | None = None


@dataclass(frozen=True)
class ProfileFootprints:
    """Everything the optimizer needs from one type's profile entry."""

    sequences: tuple[SequenceFootprint, ...]
    access_shapes: dict[str, frozenset[tuple[int, int]]]
    """Per field: the (offset in field, width) of every access lying wholly inside it."""
    straddled: frozenset[str]
    """Fields hit by an access that also covers bytes outside them (e.g. a struct copy)."""
    unmapped_accesses: int
    warnings: tuple[str, ...]

    @property
    def total_count(self) -> int:
        return sum(s.count for s in self.sequences)


@dataclass(frozen=True)
class _StoredField:
    name: str
    offset: int
    size: int

    @property
    def end(self) -> int:
        return self.offset + max(self.size, 0)


def _stored_fields(entry: TypeProfile) -> list[_StoredField]:
    out = [_StoredField(f.name, f.offset, f.size) for f in entry.fields]
    out.sort(key=lambda f: (f.offset, f.end, f.name))
    return out


def _in_fixed_area_name(name: str) -> bool:
    """A stored span of a vtable pointer or base subobject, or a base's member."""
    return name.startswith("<") or "::" in name


def _merge_spans(spans: list[Span]) -> tuple[Span, ...]:
    spans = sorted(s for s in spans if s[1] > s[0])
    merged: list[Span] = []
    for b, e in spans:
        if merged and b <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((b, e))
    return tuple(merged)


class _Mapper:
    """Maps an access [offset, offset+size) to the stored fields it overlaps."""

    def __init__(self, fields: list[_StoredField]) -> None:
        self.fields = fields
        self.starts = [f.offset for f in fields]
        self.max_size = max((f.size for f in fields), default=0)

    def overlapping(self, begin: int, end: int) -> list[_StoredField]:
        i = bisect.bisect_left(self.starts, end)
        hits = []
        while i > 0:
            i -= 1
            f = self.fields[i]
            if f.offset + self.max_size <= begin:
                break
            if f.offset < end and f.end > begin:
                hits.append(f)
        hits.reverse()
        return hits


@dataclass(frozen=True)
class _Token:
    """What one distinct access contributes to a footprint."""

    role: str
    fields: tuple[str, ...]        # current fields it overlaps
    write: bool
    fixed: Span | None             # the part in the fixed area


def _roles(tokens: list[_Token]) -> tuple[tuple[str, RoleFootprint], ...]:
    """The footprints per role of a sequence whose accesses have these tokens."""
    touched: dict[str, set[str]] = {}
    written: dict[str, set[str]] = {}
    fixed_t: dict[str, list[Span]] = {}
    fixed_w: dict[str, list[Span]] = {}
    for tok in tokens:
        touched.setdefault(tok.role, set()).update(tok.fields)
        w = written.setdefault(tok.role, set())
        if tok.write:
            w.update(tok.fields)
        if tok.fixed is not None:
            fixed_t.setdefault(tok.role, []).append(tok.fixed)
            if tok.write:
                fixed_w.setdefault(tok.role, []).append(tok.fixed)
    roles = []
    for role in sorted(touched):
        fp = RoleFootprint(frozenset(touched[role]), frozenset(written[role]),
                           _merge_spans(fixed_t.get(role, [])),
                           _merge_spans(fixed_w.get(role, [])))
        if fp.touched or fp.fixed_touched:
            roles.append((role, fp))
    return tuple(roles)


def read_footprints(record: Record, entry: TypeProfile, prefix_end: int) -> ProfileFootprints:
    """Map one type of a profile onto `record` (fields matched by name).

    `prefix_end` is where the record's movable fields start; accesses below it (and below
    the first stored field) are kept as fixed-area spans.
    """
    stored = _stored_fields(entry)
    sequences = entry.sequences
    warnings: list[str] = []
    current = {f.name for f in record.fields}
    stored_names = {f.name for f in stored}
    # The fixed area (vtable pointers, base subobjects) ends where the stored record's own
    # fields begin: `<vptr …>`, `<base …>` and `Base::member` spans below that are in it.
    stored_prefix = min((f.offset for f in stored if not _in_fixed_area_name(f.name)),
                        default=0)
    fixed_limit = min(stored_prefix, prefix_end)
    missing = sorted({f.name for f in stored if f.name not in current and not (
        _in_fixed_area_name(f.name) and f.end <= fixed_limit)})
    if missing:
        warnings.append("profile fields not in the record (ignored): " + ", ".join(missing))
    new = [f.name for f in record.fields if f.name not in stored_names]
    if new:
        warnings.append("record fields absent from the profile (treated as cold): "
                        + ", ".join(new))
    if entry.size != record.size:
        warnings.append(f"profile size {entry.size} differs from the record's {record.size}")
    mapper = _Mapper(stored)
    shapes: dict[str, set[tuple[int, int]]] = {}
    straddled: set[str] = set()
    table = access_table(sequences)
    # Each distinct access is mapped to fields once; a sequence's footprint is the union
    # over the tokens of its distinct accesses (issue 26: thousands of summaries, each of
    # up to thousands of accesses, hit a few dozen fields).
    unmapped_set: set[Access] = set()

    def token(acc: Access) -> _Token:
        begin, end = acc.offset, acc.offset + acc.size
        fixed: Span | None = None
        mapped = False
        if begin < fixed_limit:
            fixed = (begin, min(end, fixed_limit))
            mapped = True
        names = []
        for f in mapper.overlapping(begin, end):
            if f.name not in current:
                continue
            mapped = True
            names.append(f.name)
            if f.offset <= begin and end <= f.end:
                shapes.setdefault(f.name, set()).add((begin - f.offset, acc.size))
            else:
                straddled.add(f.name)
        if not mapped:
            unmapped_set.add(acc)
        return _Token(str(acc.role), tuple(names), acc.mode == "w", fixed)

    tokens = table.tokens(token)
    roles_of: dict[frozenset[int], tuple[tuple[str, RoleFootprint], ...]] = {}
    result: list[SequenceFootprint] = []
    unmapped = 0
    for qi, (seq, toks) in enumerate(zip(sequences, table.token_sets(tokens), strict=True)):
        roles = roles_of.get(toks)
        if roles is None:
            roles = roles_of[toks] = _roles([tokens.values[t] for t in toks])
        result.append(SequenceFootprint(qi, seq.count, roles, seq.entry))
        if unmapped_set and not unmapped_set.isdisjoint(seq.accesses):
            unmapped += sum(1 for a in seq.accesses if a in unmapped_set)
    if unmapped:
        warnings.append(f"{unmapped} access(es) hit no field of the record (padding or "
                        "removed fields); ignored")
    return ProfileFootprints(
        sequences=tuple(result),
        access_shapes={k: frozenset(v) for k, v in shapes.items()},
        straddled=frozenset(straddled),
        unmapped_accesses=unmapped,
        warnings=tuple(warnings))
