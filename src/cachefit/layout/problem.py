"""Assemble a layout problem: movable units, resolved constraints and weighted footprints.

From a `Record`, a profile type entry and the caller's options this builds the one
`LayoutProblem` every solver and evaluator works on:

* units: a field, or fields that share a bit-field storage unit (moved as a whole),
  each with the unnamed bit-fields declared right after it (`int : 3;`, `int : 0;`: not
  fields, but they take bits and move the compiler's cursor, so they belong to the unit);
  the flexible array member is kept apart (always last); [0, first field offset) is the
  fixed area (vptr, bases);
* alignment per unit (natural, or relaxed when every profiled access allows it);
* constraints resolved to units: chains (successor links), the first unit, pins,
  side-of-boundary rules;
* footprints: per (sequence, role) the set of touched units, aggregated by identical sets
  with summed weights; separately for written units (dirty lines). A sequence's weight is
  its count (summaries of long invocations alike), so the objective is the expected number
  of lines per operation summed over the kinds of operation weighted by their invocations;
  `entry_weights` gives a kind another weight in the same unit (`weigh_sequences`). The
  footprints of each kind alone, unweighted, are kept for the per-kind figures;
* the placement model: cache line, object start offsets, size limit. By default the
  starts are the profile's recorded base offsets of the objects modulo the line, weighted
  by how often each was seen (`observed_starts`, issue 26); without a recorded
  distribution (or with an explicit `object_align`), every multiple of the object
  alignment in a line, equally likely, as before.

It does not search for layouts or count lines; it raises `UserError` for inputs it
cannot model (unions, virtual bases, contradictory constraints).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from cachefit.errors import Location, UserError
from cachefit.layout.constraints import LayoutConstraints
from cachefit.layout.merging import MergedSequence, merge_by_inclusion
from cachefit.layout.profile_footprints import (
    ProfileFootprints,
    RoleFootprint,
    SequenceFootprint,
    Span,
    read_footprints,
)
from cachefit.model.profile import TypeProfile
from cachefit.model.record_layout import Field, Record, UnnamedBitfield

WEIGHT_RESOLUTION = 1 << 24
"""With `entry_weights`, the weights become integers summing to about this when exact
integers would be larger (the solvers' objectives are 64-bit integers)."""
START_RESOLUTION = 1 << 12
"""The observed start offsets' weights are their counts divided by their greatest common
divisor, or, when those still sum to more than this, rounded to this resolution (a start
seen at all keeps weight 1 at least)."""


def align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class Unit:
    """Fields that move together; `rel[i]` is `fields[i]`'s byte offset from the unit start."""

    index: int
    fields: tuple[str, ...]
    rel: tuple[int, ...]
    offset: int
    size: int
    align: int
    natural_align: int
    bitfield: bool = False
    fixed: bool = False
    end_bits: int | None = None
    """Bit-field units: where the compiler's bit cursor is after the unit, in bits from the
    unit start (a following bit-field may pack into the last partly used byte)."""
    lead_gap_bits: int = 0
    """Bit-field units: bits between the compiler's cursor and the unit start in the
    original layout; the compiler reproduces the unit's inner layout after any cursor that
    leaves no gap or this same gap (see `placement.bitfield_barriers`)."""
    lead: tuple[int, int, int, int] = (0, 0, 1, 0)
    """Bit-field units: the first member's (bit offset in the unit, bit-field width or 0
    for a plain member, storage size, alignment)."""

    @property
    def name(self) -> str:
        return self.fields[0] if len(self.fields) == 1 else "{" + ", ".join(self.fields) + "}"


@dataclass(frozen=True)
class WeightedFootprint:
    """Units (and fixed-area byte spans) touched together, with the summed count."""

    units: tuple[int, ...]
    fixed: tuple[Span, ...]
    weight: int


@dataclass(frozen=True)
class KindFootprints:
    """One kind of operation (entry function; None for a profile without kinds): its
    counted invocations and its footprints weighted by count alone."""

    entry: str | None
    count: int
    lines_fp: tuple[WeightedFootprint, ...]
    dirty_fp: tuple[WeightedFootprint, ...]


@dataclass(frozen=True)
class SideRule:
    """Unit `unit` must stay before (or after) marker unit `marker` or byte offset `offset`."""

    unit: int
    before: bool
    marker: int | None = None
    offset: int | None = None


@dataclass
class LayoutProblem:
    record: Record
    units: tuple[Unit, ...]
    fam: Field | None
    prefix_end: int
    record_align: int
    line: int
    object_align: int
    starts: tuple[int, ...]
    size_limit: int
    lines_fp: tuple[WeightedFootprint, ...]
    dirty_fp: tuple[WeightedFootprint, ...]
    report_lines_fp: tuple[WeightedFootprint, ...]
    report_dirty_fp: tuple[WeightedFootprint, ...]
    total_count: int
    succ: dict[int, int]
    pred: dict[int, int]
    first: int | None
    sides: tuple[SideRule, ...]
    relaxed: dict[str, int]
    merged: tuple[MergedSequence, ...]
    honoured: tuple[str, ...]
    warnings: tuple[str, ...]
    field_unit: dict[str, int] = field(default_factory=dict)
    size_min: int = 0        # sizeof at least this (an asserted exact size)
    kinds: tuple[KindFootprints, ...] = ()
    invocations: int = 0     # counted invocations (total_count is the sum of the weights)
    start_weights: tuple[int, ...] = ()
    """Empty: the starts are equally likely (the uniform placement model). Otherwise one
    weight per start: the objects' observed distribution (`observed_starts`)."""

    @property
    def start_weight_total(self) -> int:
        """What the totals over starts are divided by for an expected value."""
        return sum(self.start_weights) if self.start_weights else len(self.starts)

    def weighted_starts(self) -> list[tuple[int, int]]:
        """(start, weight) pairs; weight 1 each in the uniform model."""
        if self.start_weights:
            return list(zip(self.starts, self.start_weights, strict=True))
        return [(s, 1) for s in self.starts]

    @property
    def movable(self) -> list[int]:
        """Units a layout orders (every unit; the FAM is not a unit)."""
        return [u.index for u in self.units]

    @cached_property
    def hot(self) -> frozenset[int]:
        """Units touched by some footprint the solver optimises."""
        return frozenset(u for fp in self.lines_fp for u in fp.units)

    def chain_of(self, unit: int) -> list[int]:
        """The chain (contiguity constraint) through `unit`, head first; [unit] if none."""
        head = unit
        while head in self.pred:
            head = self.pred[head]
        chain = [head]
        while chain[-1] in self.succ:
            chain.append(self.succ[chain[-1]])
        return chain


# ---------------------------------------------------------------------------- units


def flexible_array(record: Record) -> Field | None:
    """The record's flexible array member (`T data[]`, or the old `T data[0]`), which every
    order keeps last; None when it has none."""
    if not record.fields:
        return None
    last = record.fields[-1]
    if last.size == 0 and not last.is_bitfield and (
            last.type.rstrip().endswith("[]") or last.type.rstrip().endswith("[0]")):
        return last
    return None


def _fixed_area_end(record: Record) -> int:
    """End of the area that never moves: the vptr and (non-virtual) bases.

    Fields start at the first field's offset, or earlier when the bases and vptr end before
    it (the next field then goes at the next aligned offset after them, as in C++); a field
    placed in a base's tail padding keeps the first field's offset as the limit.
    """
    first = min([f.offset for f in record.fields] +
                [p.bit_offset // 8 for p in record.unnamed_bitfields], default=0)
    ends = [b.offset + b.size for b in record.bases if not b.virtual]
    if record.vptr_offset is not None:
        ends.append(record.vptr_offset + 8)
    return min(first, max(ends)) if ends else first


def _span(f: Field, align: int) -> tuple[int, int]:
    """Bytes a field claims: a bit-field claims its storage unit from the unit's start up
    to its last used byte (what follows may be packed into the rest of the unit by the
    compiler: a plain member at the next byte, which the placement predicts exactly)."""
    if f.bit_offset is not None and f.is_bitfield:
        unit = max(align, 1)
        start = f.bit_offset // (8 * unit) * unit
        return min(start, f.offset), max(f.end, start + (1 if f.bit_size == 0 else 0))
    return f.offset, f.offset + f.size


def _bit_end(f: Field) -> int:
    """The compiler's bit cursor right after `f` (in bits from the record start)."""
    if f.bit_offset is not None and f.bit_size is not None:
        return f.bit_offset + f.bit_size
    return 8 * (f.offset + f.size)


@dataclass(frozen=True)
class _Piece:
    """A named field or an unnamed bit-field, as unit building sees it."""

    pos: int                      # declaration position among fields and unnamed bit-fields
    begin: int                    # bytes claimed: [begin, end)
    end: int
    bit_begin: int
    bit_end: int                  # the compiler's bit cursor after it
    align: int
    lead: tuple[int, int, int]    # (bit-field width or 0 for a plain member, size, align)
    field: Field | None = None    # None: an unnamed bit-field
    anchor: int | None = None     # unnamed bit-field: the position of the piece it moves with


def _pieces(fields: list[Field], pads: list[UnnamedBitfield],
            eff_align: dict[str, int]) -> list[_Piece]:
    """Fields and unnamed bit-fields in declaration order. An unnamed bit-field moves with
    the named field declared right before it (the first named field when none is): an
    `int : 3` takes bits of that field's storage unit or the next, an `int : 0` moves the
    bit cursor on from where that field ends; the rewriter keeps the text in that order."""
    out: list[_Piece] = []
    names = {f.name for f in fields}
    by_after: dict[str | None, list[UnnamedBitfield]] = {}
    for pad in pads:
        after = pad.after if pad.after in names else (None if pad.after is None else "")
        by_after.setdefault(after, []).append(pad)

    def add_pads(after: str | None, anchor: int) -> None:
        for pad in by_after.get(after, []):
            align = max(1, pad.align)
            if pad.bit_size == 0:
                begin = end = pad.bit_offset // 8
            else:
                begin = min(pad.bit_offset // (8 * align) * align, pad.bit_offset // 8)
                end = -(-(pad.bit_offset + pad.bit_size) // 8)
            out.append(_Piece(len(out), begin, end, pad.bit_offset,
                              pad.bit_offset + pad.bit_size, align,
                              (pad.bit_size, pad.size, align), None, anchor))

    if fields:
        add_pads(None, len(by_after.get(None, [])))   # anchored to the first field
    for f in fields:
        align = eff_align[f.name]
        b, e = _span(f, align)
        bit = f.bit_offset if f.bit_offset is not None else 8 * f.offset
        out.append(_Piece(len(out), b, e, bit, _bit_end(f), align,
                          (f.bit_size or 0, f.size, align), f))
        add_pads(f.name, len(out) - 1)
    if fields:
        add_pads("", len(out) - 1)   # after a field that is not movable (the FAM): last
    return out


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (a[0] < b[1] and b[0] < a[1]) if b[1] > b[0] else a[0] < b[0] < a[1]


def _build_units(record: Record, fields: list[Field], prefix_end: int,
                 eff_align: dict[str, int]) -> list[tuple[list[_Piece], int, int, bool]]:
    """Group fields (and unnamed bit-fields) into movable units: (pieces in declaration
    order, start, end, fixed)."""
    pieces = _pieces(fields, record.unnamed_bitfields, eff_align)
    items = sorted(pieces, key=lambda p: (p.begin, p.pos))
    groups: list[list[_Piece]] = []
    for item in items:
        if groups and any(_overlap((g.begin, g.end), (item.begin, item.end))
                          for g in groups[-1]):
            groups[-1].append(item)
        else:
            groups.append([item])
    # An unnamed bit-field joins the group of the field it moves with; then groups that
    # overlap (or that the joined group now spans) become one.
    if any(p.anchor is not None for p in pieces):
        group_of = {p.pos: gi for gi, g in enumerate(groups) for p in g}
        parent = list(range(len(groups)))

        def root(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for p in pieces:
            if p.anchor is not None:
                parent[root(group_of[p.pos])] = root(group_of[p.anchor])
        joined: dict[int, list[_Piece]] = {}
        for gi, g in enumerate(groups):
            joined.setdefault(root(gi), []).extend(g)
        groups = list(joined.values())
        merged = True
        while merged:
            merged = False
            groups.sort(key=lambda g: (min(p.begin for p in g), min(p.pos for p in g)))
            for gi in range(1, len(groups)):
                prev, group = groups[gi - 1], groups[gi]
                span = (min(p.begin for p in group), max(p.end for p in group))
                if max(p.end for p in prev) > span[0] or _overlap(
                        (min(p.begin for p in prev), max(p.end for p in prev)), span):
                    groups[gi - 1: gi + 1] = [prev + group]
                    merged = True
                    break
    # A group must start on a multiple of its alignment so it can move as one piece:
    # grow it downwards over the fields it then covers.
    merged = True
    while merged:
        merged = False
        for gi in range(1, len(groups)):
            group = groups[gi]
            align = max(p.align for p in group)
            start = min(p.begin for p in group)
            if start % align == 0:
                continue
            low = start // align * align
            prev = groups[gi - 1]
            if max(p.end for p in prev) > low:
                groups[gi - 1: gi + 1] = [prev + group]
                merged = True
                break
    out = []
    for group in groups:
        members = sorted(group, key=lambda p: p.pos)
        start = min(p.begin for p in group)
        end = max(p.end for p in group)
        out.append((members, start, end, start < prefix_end))
    return out


def _cursors_before(pieces: list[_Piece], prefix_end: int) -> dict[int, int]:
    """Per piece position, the compiler's bit cursor before it in the original declaration
    order (the end of the previous member; the fixed area's end for the first)."""
    out: dict[int, int] = {}
    cursor = 8 * prefix_end
    for p in sorted(pieces, key=lambda p: (p.bit_begin, p.pos)):
        out[p.pos] = cursor
        cursor = max(cursor, p.bit_end)
    return out


def _relaxed_alignment(f: Field, natural: int, fps: ProfileFootprints) -> int:
    """The smallest alignment every profiled access to `f` allows (§III.3), else `natural`."""
    shapes = fps.access_shapes.get(f.name)
    if not shapes or f.name in fps.straddled or f.is_bitfield:
        return natural
    need = 1
    for offset, width in shapes:
        if not is_power_of_two(width) or offset % width:
            return natural
        need = max(need, width)
    return min(natural, need)


# ------------------------------------------------------------------------ footprints


def _aggregate(sequences: tuple[SequenceFootprint, ...], field_unit: dict[str, int],
               written: bool) -> tuple[WeightedFootprint, ...]:
    weights: dict[tuple[tuple[int, ...], tuple[Span, ...]], int] = {}
    # Sequences share their footprints' objects (and often their footprints): the unit
    # set of each distinct footprint is made once (issue 26).
    keys: dict[RoleFootprint, tuple[tuple[int, ...], tuple[Span, ...]] | None] = {}
    for seq in sequences:
        if seq.count == 0:
            continue
        for _role, fp in seq.roles:
            if fp in keys:
                key = keys[fp]
            else:
                names = fp.written if written else fp.touched
                spans = fp.fixed_written if written else fp.fixed_touched
                units = tuple(sorted({field_unit[n] for n in names if n in field_unit}))
                key = keys[fp] = (units, spans) if units or spans else None
            if key is not None:
                weights[key] = weights.get(key, 0) + seq.count
    return tuple(WeightedFootprint(u, s, w) for (u, s), w in sorted(weights.items()))


def weigh_sequences(sequences: tuple[SequenceFootprint, ...],
                    entry_weights: Mapping[str, float] | None
                    ) -> tuple[SequenceFootprint, ...]:
    """The sequences with their weights as `count`. Without `entry_weights` (or when it
    names no kind of these sequences) a sequence weighs its count, as it always did. A
    kind named there weighs `entry_weights[kind]` in all instead of its invocations: each
    of its sequences gets that times its share of the kind's invocations. The weights are
    then made integers: exactly (common denominator) when that stays below
    WEIGHT_RESOLUTION, else rounded at that resolution (a sequence of positive weight
    keeps at least 1)."""
    if not entry_weights or not any(s.entry in entry_weights for s in sequences
                                    if s.entry is not None):
        return sequences
    per_kind: dict[str | None, int] = {}
    for s in sequences:
        per_kind[s.entry] = per_kind.get(s.entry, 0) + s.count
    scale: dict[str | None, Fraction] = {}
    for kind, n in per_kind.items():
        w = entry_weights.get(kind) if kind is not None else None
        if w is None or n == 0:
            scale[kind] = Fraction(1)
        else:
            if not math.isfinite(w) or w < 0:
                raise UserError(f"the weight {w!r} of {kind} is not a number >= 0")
            scale[kind] = Fraction(repr(float(w))).limit_denominator(10**6) / n
    exact = [s.count * scale[s.entry] for s in sequences]
    denominator = math.lcm(*(w.denominator for w in exact)) if exact else 1
    total = sum(exact, Fraction(0))
    if total * denominator <= WEIGHT_RESOLUTION:
        weights = [int(w * denominator) for w in exact]
    else:
        factor = WEIGHT_RESOLUTION / total
        weights = [max(1, round(w * factor)) if w > 0 else 0 for w in exact]
    return tuple(SequenceFootprint(s.index, w, s.roles, s.entry)
                 for s, w in zip(sequences, weights, strict=True))


def _kinds(sequences: tuple[SequenceFootprint, ...],
           field_unit: dict[str, int]) -> tuple[KindFootprints, ...]:
    """Per kind (heaviest first, ties by name), its count-weighted footprints."""
    by_kind: dict[str | None, list[SequenceFootprint]] = {}
    for s in sequences:
        by_kind.setdefault(s.entry, []).append(s)
    out = [KindFootprints(kind, sum(s.count for s in seqs),
                          _aggregate(tuple(seqs), field_unit, False),
                          _aggregate(tuple(seqs), field_unit, True))
           for kind, seqs in by_kind.items()]
    return tuple(sorted(out, key=lambda k: (-k.count, k.entry or "")))


# ------------------------------------------------------------------ object starts


@dataclass(frozen=True)
class ObservedStarts:
    """Where the objects start, from the profile (issue 26): `starts` (offsets into a
    line, ascending) with `weights`, or, when the distribution is the uniform model of
    some alignment (all at 0: cache-aligned), `weights` empty and `object_align` that
    alignment. `object_align` is otherwise the largest power of two dividing every
    start (the line for 0)."""

    starts: tuple[int, ...]
    weights: tuple[int, ...]
    object_align: int
    warnings: tuple[str, ...] = ()


def _lowbit(value: int, line: int) -> int:
    return line if value == 0 else min(value & -value, line)


def observed_starts(profile_type: TypeProfile, line: int,
                    record_align: int) -> ObservedStarts | None:
    """The placement model the profile's recorded alignment gives, None when it records
    none (or records it modulo a shorter line than `line`)."""
    counts = profile_type.alignment
    if not counts or line > profile_type.alignment_line:
        return None
    per: dict[int, int] = {}
    for mod, n in counts.items():
        if n > 0:
            per[mod % line] = per.get(mod % line, 0) + n
    if not per:
        return None
    starts = tuple(sorted(per))
    align = min(_lowbit(s, line) for s in starts)
    warnings: tuple[str, ...] = ()
    if align < record_align:
        warnings = (f"objects of {profile_type.name} were seen at offsets not aligned to its "
                    f"alignment {record_align} ({', '.join(map(str, starts))} mod {line})",)
    values = [per[s] for s in starts]
    if starts == tuple(range(0, line, align)) and len(set(values)) == 1:
        return ObservedStarts(starts, (), align, warnings)      # the uniform model
    g = math.gcd(*values)
    weights = [v // g for v in values]
    total = sum(weights)
    if total > START_RESOLUTION:
        weights = [max(1, round(w * START_RESOLUTION / total)) for w in weights]
    return ObservedStarts(starts, tuple(weights), align, warnings)


# ----------------------------------------------------------------------- constraints


def _resolve_chains(constraints: LayoutConstraints, field_unit: dict[str, int],
                    fam: Field | None) -> tuple[dict[int, int], dict[int, int]]:
    succ: dict[int, int] = {}
    pred: dict[int, int] = {}
    for rule in constraints.units:
        if fam is not None and fam.name in rule.fields:
            raise UserError(f"unit constraint {rule.fields} includes the flexible array "
                            f"member {fam.name}, which always stays last")
        chain: list[int] = []
        for name in rule.fields:
            u = field_unit[name]
            if chain and chain[-1] == u:
                continue
            if u in chain:
                raise UserError(f"unit constraint {rule.fields} splits the bit-field unit "
                                f"holding {name}")
            chain.append(u)
        for a, b in zip(chain, chain[1:], strict=False):
            if succ.get(a, b) != b or pred.get(b, a) != a:
                raise UserError(f"unit constraint {rule.fields} contradicts another one")
            succ[a] = b
            pred[b] = a
    for start in succ:
        seen = {start}
        u = start
        while u in succ:
            u = succ[u]
            if u in seen:
                raise UserError("unit constraints form a cycle")
            seen.add(u)
    return succ, pred


def _resolve_sides(constraints: LayoutConstraints, record: Record,
                   field_unit: dict[str, int], units: list[Unit],
                   fam: Field | None) -> list[SideRule]:
    rules: dict[tuple[int, bool, int | None, int | None], SideRule] = {}
    for rule in constraints.same_side:
        names = list(rule.fields) or [f.name for f in record.fields]
        if isinstance(rule.boundary, str):
            if fam is not None and rule.boundary == fam.name:
                continue  # everything is before the flexible array member anyway
            marker = field_unit[rule.boundary]
            m_off = units[marker].offset
            for n in names:
                if fam is not None and n == fam.name:
                    continue
                u = field_unit[n]
                if u == marker:
                    continue
                before = (units[u].offset, u) < (m_off, marker)
                rules[(u, before, marker, None)] = SideRule(u, before, marker=marker)
        else:
            bound = rule.boundary
            for n in names:
                if fam is not None and n == fam.name:
                    continue
                u = field_unit[n]
                unit = units[u]
                if unit.offset + unit.size <= bound:
                    before = True
                elif unit.offset >= bound:
                    before = False
                else:
                    raise UserError(f"field {n} straddles the same-side boundary {bound}",
                                    "pick a boundary between fields")
                rules[(u, before, None, bound)] = SideRule(u, before, offset=bound)
    return [rules[k] for k in sorted(rules, key=lambda k: (k[0], k[2] or -1, k[3] or -1))]


# -------------------------------------------------------------------------- problem


def build_problem(record: Record, profile_type: TypeProfile, *, cache_line: int,
                  object_align: int | None, relax_align: bool,
                  constraints: LayoutConstraints, allow_growth: bool,
                  merge: bool, entry_weights: Mapping[str, float] | None = None
                  ) -> LayoutProblem:
    """Validate the inputs and assemble the `LayoutProblem` (see the module docstring)."""
    if record.kind == "union":
        ext = record.extent
        raise UserError(f"{record.name} is a union; its members share storage and cannot "
                        "be reordered", "name a struct or class",
                        Location(ext.file, ext.begin_line, ext.begin_col) if ext else None)
    if any(b.virtual for b in record.bases):
        raise UserError(f"{record.name} has virtual bases, whose placement cachefit cannot "
                        "predict", "flatten the class first (`cachefit flatten`)")
    if not is_power_of_two(cache_line):
        raise UserError(f"cache line size {cache_line} is not a power of two")
    if object_align is not None and not is_power_of_two(object_align):
        raise UserError(f"object alignment {object_align} is not a power of two")
    constraints.check_names(record)
    names = [f.name for f in record.fields]
    if len(set(names)) != len(names):
        raise UserError(f"{record.name} has several fields with the same name")

    fam = flexible_array(record)
    fields = [f for f in record.fields if f is not fam]
    prefix_end = _fixed_area_end(record)
    record_align = max(record.align, 1)
    line = cache_line
    footprints = read_footprints(record, profile_type, prefix_end)   # validates the entry
    warnings = list(footprints.warnings)
    observed = observed_starts(profile_type, line, record_align) \
        if object_align is None else None
    start_weights: tuple[int, ...] = ()
    if observed is not None:
        obj_align = observed.object_align
        starts = observed.starts
        start_weights = observed.weights
        warnings += observed.warnings
    else:
        obj_align = object_align if object_align is not None else record_align
        starts = (0,) if obj_align >= line else tuple(range(0, line, obj_align))
    # Members of a packed (or #pragma pack) record are aligned to at most the record's.
    natural = {f.name: max(1, min(f.align, record_align)) for f in fields}

    groups = _build_units(record, fields, prefix_end, natural)
    pins = set(constraints.pins)
    units: list[Unit] = []
    field_unit: dict[str, int] = {}
    relaxed: dict[str, int] = {}
    touched_names = {n for s in footprints.sequences for _r, fp in s.roles for n in fp.touched}
    cursor_before = _cursors_before([p for g in groups for p in g[0]], prefix_end)
    for pieces, start, end, in_prefix in groups:
        members = [p.field for p in pieces if p.field is not None]
        # Unnamed bit-fields do not align the record, but their type's alignment decides
        # where the compiler puts them: the unit keeps it so they land as before.
        nat = max(p.align for p in pieces)
        bitfield = any(f.is_bitfield for f in members) or len(members) < len(pieces)
        end_bits: int | None = None
        lead_gap = 0
        lead = (0, 0, 1, 0)
        if bitfield:
            end_bits = max(p.bit_end for p in pieces) - 8 * start
            head = pieces[0]
            lead_gap = 8 * start - cursor_before[head.pos]
            lead = (head.bit_begin - 8 * start, *head.lead)
        align = nat
        if relax_align and not bitfield and members[0].name in touched_names:
            align = _relaxed_alignment(members[0], nat, footprints)
            if align < nat:
                relaxed[members[0].name] = align
        fixed = in_prefix or any(f.name in pins for f in members)
        idx = len(units)
        units.append(Unit(idx, tuple(f.name for f in members),
                          tuple(f.offset - start for f in members), start, end - start,
                          align, nat, bitfield, fixed, end_bits, max(lead_gap, 0), lead))
        for f in members:
            field_unit[f.name] = idx

    succ, pred = _resolve_chains(constraints, field_unit, fam)
    first: int | None = None
    if constraints.first is not None:
        if fam is not None and constraints.first == fam.name:
            raise UserError(f"the flexible array member {fam.name} cannot be first")
        first = field_unit[constraints.first]
        if first in pred:
            raise UserError(f"{constraints.first} must be first but a unit constraint puts "
                            "another field before it")
        head = units[first]
        if head.fixed and head.offset != align_up(prefix_end, head.align):
            raise UserError(f"{constraints.first} is pinned at {head.offset} but must be first")
    sides = _resolve_sides(constraints, record, field_unit, units, fam)

    used = sum(u.size for u in units)
    if allow_growth:
        worst = prefix_end + sum(u.size + u.align - 1 for u in units)
        size_limit = align_up(max(worst, record.size), record_align)
    else:
        size_limit = align_up(align_up(record.size, line), record_align)
    if constraints.max_size is not None:
        # sizeof is a multiple of the alignment: the largest one within the bound.
        size_limit = min(size_limit, constraints.max_size // record_align * record_align)
    size_min = constraints.min_size or 0
    if size_min > size_limit:
        raise UserError(f"{record.name} must be at least {size_min} bytes but at most "
                        f"{size_limit}", "check the size constraints")
    if prefix_end + used > size_limit:
        raise UserError(f"the fields of {record.name} do not fit in {size_limit} bytes")

    weighted = weigh_sequences(footprints.sequences, entry_weights)
    solver_seqs = weighted
    merged: tuple[MergedSequence, ...] = ()
    if merge:
        solver_seqs, merged = merge_by_inclusion(weighted)

    honoured = _describe(record, units, fam, prefix_end, size_limit, allow_growth,
                         constraints)
    return LayoutProblem(
        record=record, units=tuple(units), fam=fam, prefix_end=prefix_end,
        record_align=record_align, line=line, object_align=obj_align, starts=starts,
        size_limit=size_limit,
        lines_fp=_aggregate(solver_seqs, field_unit, False),
        dirty_fp=_aggregate(solver_seqs, field_unit, True),
        report_lines_fp=_aggregate(weighted, field_unit, False),
        report_dirty_fp=_aggregate(weighted, field_unit, True),
        total_count=sum(s.count for s in weighted), succ=succ, pred=pred, first=first,
        sides=tuple(sides), relaxed=relaxed, merged=merged, honoured=tuple(honoured),
        warnings=tuple(warnings), field_unit=field_unit, size_min=size_min,
        kinds=_kinds(footprints.sequences, field_unit),
        invocations=footprints.total_count, start_weights=start_weights)


def _describe(record: Record, units: list[Unit], fam: Field | None, prefix_end: int,
              size_limit: int, allow_growth: bool,
              constraints: LayoutConstraints) -> list[str]:
    """Human-readable list of the constraints the chosen layout honours."""
    out = ["natural alignment of every field (unless relaxed, see relaxed_alignment)"]
    if prefix_end:
        out.append(f"fixed area [0, {prefix_end}) (vptr/bases) unchanged")
    for u in units:
        if u.bitfield:
            out.append(f"bit-field storage unit {', '.join(u.fields)} moved as a whole")
    if fam is not None:
        out.append(f"flexible array member {fam.name} stays last")
    offsets = {f.name: f.offset for f in record.fields}
    for name in constraints.pins:
        out.append(f"pin {name} at offset {offsets[name]}")
    for unit_rule in constraints.units:
        why = f" ({unit_rule.reason})" if unit_rule.reason else ""
        out.append(f"unit {', '.join(unit_rule.fields)} contiguous in this order{why}")
    if constraints.first is not None:
        out.append(f"{constraints.first} stays first")
    for rule in constraints.same_side:
        why = f" ({rule.reason})" if rule.reason else ""
        who = ", ".join(rule.fields) if rule.fields else "all fields"
        out.append(f"{who} stay on their side of {rule.boundary!r}{why}")
    limit = "grown if needed" if allow_growth and constraints.max_size is None else \
        f"at most {size_limit} bytes"
    if constraints.min_size:
        limit += f", at least {constraints.min_size} bytes"
    out.append(f"sizeof({record.name}) {limit}")
    return out
