"""The report's sharing section of one type (issue 30): what threads do to its objects and
what the new layout changes about it.

For a type whose profile has `sharing` (a multi-threaded run): the threads (from the
profile's `SharedObject` patterns: the fields each thread read and wrote), the lines that
change hands per invocation before and after, the (written field, touched field) pairs on
those lines with the threads that wrote and touched them, and the padding of the new
layout with what each padding buys (the transfers per invocation it saves). Every transfer
figure is `cachefit.layout.sharing.transfers` (docs/layout.md, "Threads"), normalised per
counted invocation as the lines are. What a padding buys is the optimizer's figure
(`LayoutResult.padding_gains`: without it, the other line breaks kept) when the report ran
the optimizer; for a plan's or a compiled layout, whose line breaks are not known, it is
the layout without that padding member and with the others as declared, placed by
`cachefit.layout.evaluate_order` on the record with its padding members, minus the layout.
`padded_layout` is also how the report places a plan's order that has padding. This module
computes no cost of its own, prints nothing and reads no files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cachefit.layout import evaluate_order
from cachefit.layout.result import LayoutEvaluation
from cachefit.layout.sharing import SharingFigures, fields_of, transfers
from cachefit.model import Field, Record
from cachefit.model.padding_members import declared_members, pad_member, padded_field
from cachefit.model.profile import TypeProfile, TypeSharing


@dataclass(frozen=True)
class ThreadUse:
    """One thread (numbered in the order the process saw them) over the shared objects:
    how many it touched and the fields it read and wrote (traced layout's order)."""

    thread: int
    objects: int
    read: tuple[str, ...]
    written: tuple[str, ...]


@dataclass(frozen=True)
class SharingCause:
    """A written field and a touched field on lines that change hands: transfers per
    invocation of the lines holding both, before and after (a line counts for every pair
    it holds), and the threads that wrote `written` and touched `touched`."""

    written: str
    touched: str
    before: float
    after: float
    writers: tuple[int, ...]
    touchers: tuple[int, ...]


@dataclass(frozen=True)
class PaddingValue:
    """Bytes of padding before `field` in the new layout and the transfers per invocation
    they save (see the module docstring)."""

    field: str
    size: int
    saved: float

    @property
    def saved_per_byte(self) -> float:
        return self.saved / self.size


@dataclass(frozen=True)
class SharingSection:
    """The sharing part of a type's report (figures per counted invocation)."""

    threads: int
    granule: int
    shared_objects: int
    private_objects: int
    lost: int
    handoffs: int
    """Handoffs recorded (a thread touching an object another thread wrote last)."""
    transfers_before: float
    transfers_after: float
    causes: tuple[SharingCause, ...]
    """Heaviest before first, then heaviest after; ties by names."""
    thread_use: tuple[ThreadUse, ...]
    padding: tuple[PaddingValue, ...]
    """In the new layout's declaration order."""
    size_before: int
    size_after: int

    @property
    def padding_bytes(self) -> int:
        return sum(p.size for p in self.padding)


def padded_record(record: Record, padding: Mapping[str, int]) -> Record:
    """`record` with a `char[n]` padding member per padded field (model.padding_members),
    placed after its end (the order given to `evaluate_order` says where it goes)."""
    if not padding:
        return record
    fields = list(record.fields)
    end = record.size
    for name, size in padding.items():
        fields.append(Field(pad_member(name), f"char[{size}]", end, size, 1))
        end += size
    return replace(record, fields=fields, size=end)


def padded_layout(record: Record, tp: TypeProfile, order: Sequence[str],
                  padding: Mapping[str, int], *, cache_line: int,
                  object_align: int | None,
                  entry_weights: Mapping[str, float] | None = None) -> LayoutEvaluation:
    """`evaluate_order` of `order` with a padding member before each padded field (as an
    optimize build declares them); its offsets name the padding members too."""
    return evaluate_order(padded_record(record, padding), tp,
                          list(declared_members(order, padding)), cache_line=cache_line,
                          object_align=object_align, allow_growth=True,
                          entry_weights=entry_weights)


def compiled_padding(record: Record) -> tuple[tuple[str, ...], dict[str, int]]:
    """A compiled record's field order without its padding members, and its padding."""
    order = tuple(f.name for f in record.fields if padded_field(f.name) is None)
    pads = {name: f.size for f in record.fields
            if (name := padded_field(f.name)) is not None}
    return order, pads


def _figures(tp: TypeProfile, sharing: TypeSharing, record: Record,
             offsets: Mapping[str, int], cache_line: int) -> SharingFigures:
    sizes = {f.name: f.size for f in record.fields}
    spans = {n: (off, sizes[n]) for n, off in offsets.items() if n in sizes}
    return transfers(sharing, spans, tp.fields, tp.alignment, cache_line)


def _thread_use(tp: TypeProfile, sharing: TypeSharing) -> tuple[ThreadUse, ...]:
    objects: dict[int, int] = {}
    reads: dict[int, list[tuple[int, int]]] = {}
    writes: dict[int, list[tuple[int, int]]] = {}
    for o in sharing.shared:
        for t in sorted({t for t, _o, _n in (*o.reads, *o.writes)}):
            objects[t] = objects.get(t, 0) + o.count
        for t, off, n in o.reads:
            reads.setdefault(t, []).append((off, n))
        for t, off, n in o.writes:
            writes.setdefault(t, []).append((off, n))
    return tuple(ThreadUse(t, objects[t], fields_of(reads.get(t, []), tp.fields),
                           fields_of(writes.get(t, []), tp.fields)) for t in sorted(objects))


def _causes(before: SharingFigures, after: SharingFigures, per: int,
            use: tuple[ThreadUse, ...]) -> tuple[SharingCause, ...]:
    was = {(p.written, p.touched): p.transfers / per for p in before.pairs}
    now = {(p.written, p.touched): p.transfers / per for p in after.pairs}
    keys = sorted(was, key=lambda k: (-was[k], k))
    keys += sorted((k for k in now if k not in was), key=lambda k: (-now[k], k))
    out = []
    for w, t in keys:
        writers = tuple(u.thread for u in use if w in u.written)
        touchers = tuple(u.thread for u in use if t in u.read or t in u.written)
        out.append(SharingCause(w, t, was.get((w, t), 0.0), now.get((w, t), 0.0), writers,
                                touchers))
    return tuple(out)


def sharing_section(tp: TypeProfile, record: Record, after_offsets: Mapping[str, int],
                    after_size: int, after_order: Sequence[str], padding: Mapping[str, int],
                    *, cache_line: int, object_align: int | None,
                    entry_weights: Mapping[str, float] | None = None,
                    gains: Mapping[str, float] | None = None) -> SharingSection | None:
    """The sharing section of `tp` (None without sharing data): `record` is the traced
    layout, `after_offsets`/`after_size` the new layout (field order `after_order`, with
    `padding` before the named fields; its offsets may name the padding members);
    `gains`: the optimizer's `padding_gains` of that layout, if it chose it."""
    sharing = tp.sharing
    if sharing is None:
        return None
    per = max(tp.counted, 1)
    before = _figures(tp, sharing, record, {f.name: f.offset for f in record.fields},
                      cache_line)
    after = _figures(tp, sharing, record, after_offsets, cache_line)
    use = _thread_use(tp, sharing)
    values = []
    for name in after_order:
        if name not in padding:
            continue
        if gains is not None and name in gains:
            values.append(PaddingValue(name, padding[name], gains[name]))
            continue
        rest = {k: v for k, v in padding.items() if k != name}
        without = padded_layout(record, tp, after_order, rest, cache_line=cache_line,
                                object_align=object_align, entry_weights=entry_weights)
        t = _figures(tp, sharing, record, without.offsets, cache_line)
        values.append(PaddingValue(name, padding[name], (t.transfers - after.transfers) / per))
    return SharingSection(
        threads=sharing.threads, granule=sharing.granule,
        shared_objects=sum(o.count for o in sharing.shared),
        private_objects=sharing.private_objects, lost=sharing.lost,
        handoffs=sum(h.count for h in sharing.handoffs),
        transfers_before=before.per_operation(per), transfers_after=after.per_operation(per),
        causes=_causes(before, after, per, use), thread_use=use, padding=tuple(values),
        size_before=record.size, size_after=after_size)
