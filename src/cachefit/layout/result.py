"""Results of the layout optimizer and of evaluating a given order, as plain data.

Line counts are per invocation: the weighted average over the profile's sequences (weight =
count, or the kinds' `entry_weights`) of the lines all object roles touch, expected over
the object start offsets of the placement model: equally likely, or as the profile
observed them (`start_distribution`, issue 26) (`*_worst`: the worst start offset).
`KindFigures` are the same per kind of operation (entry function), weighted by count.
Offsets are what the C placement model predicts; the source rewriter re-checks them with
the compiler. This module holds data and serialises it; it computes nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cachefit.layout.merging import MergedSequence


@dataclass(frozen=True)
class LineFigures:
    """Lines and dirty lines per invocation (expected over start offsets, and worst)."""

    lines: float
    dirty: float
    lines_worst: float
    dirty_worst: float


@dataclass(frozen=True)
class KindFigures:
    """One kind of operation (entry; None for a profile without kinds) under one layout:
    its counted invocations, lines and dirty lines per invocation (expected over start
    offsets) and the per-footprint lower bounds, which hold for any order."""

    entry: str | None
    invocations: int
    lines: float
    dirty: float
    lines_lower_bound: float
    dirty_lower_bound: float


@dataclass(frozen=True)
class LayoutEvaluation:
    """The cost of one declaration order under the placement model."""

    order: tuple[str, ...]
    offsets: dict[str, int]
    bit_offsets: dict[str, int]
    size: int
    figures: LineFigures
    violations: tuple[str, ...]
    bitfield_barriers: dict[str, str] = field(default_factory=dict)
    """Field -> type of the unnamed zero-width bit-field to declare before it."""
    kinds: tuple[KindFigures, ...] = ()

    @property
    def lines(self) -> float:
        return self.figures.lines

    @property
    def dirty(self) -> float:
        return self.figures.dirty


@dataclass(frozen=True)
class LayoutResult:
    """What `optimize_layout` chose and how good it is."""

    record: str
    order: tuple[str, ...]
    offsets: dict[str, int]
    bit_offsets: dict[str, int]
    size_before: int
    size_after: int
    size_limit: int
    lines_before: float
    lines_after: float
    lines_lower_bound: float
    dirty_before: float
    dirty_after: float
    dirty_lower_bound: float
    lines_worst_before: float
    lines_worst_after: float
    optimal: bool
    gap: float
    """(lines_after - lines_lower_bound) / lines_after; 0 when proven optimal."""
    solver_seconds: float
    method: str
    merged: tuple[MergedSequence, ...]
    constraints_honoured: tuple[str, ...]
    relaxed_alignment: dict[str, int]
    """Fields placed below their natural alignment: name -> alignment used."""
    hot_fields: tuple[str, ...]
    cache_line: int
    object_align: int
    start_offsets: int
    invocations: int
    warnings: tuple[str, ...] = field(default_factory=tuple)
    bitfield_barriers: dict[str, str] = field(default_factory=dict)
    """Field -> type of an unnamed zero-width bit-field (`unsigned int : 0;`) to declare
    right before it, so the compiler does not pack it into free bits before it."""
    kinds_before: tuple[KindFigures, ...] = ()
    kinds_after: tuple[KindFigures, ...] = ()
    """Per kind of operation, heaviest first: figures of the original and the new layout."""
    start_distribution: dict[int, int] = field(default_factory=dict)
    """The observed start offsets in a line -> weight (issue 26: where the profile saw the
    objects); empty in the uniform model (every multiple of `object_align`)."""
    padding: dict[str, int] = field(default_factory=dict)
    """Bytes of padding declared right before the named field (issue 30: only where the
    sharing term separates fields), counted in `size_after`."""
    transfers_before: float | None = None
    transfers_after: float | None = None
    """Expected lines changing hands between threads per operation (docs/layout.md,
    "Threads"); None when the profile records no handoffs."""
    padding_gains: dict[str, float] = field(default_factory=dict)
    """Per padded field: transfers per operation its padding saves (without it, the rest
    of the layout's breaks kept)."""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if all(k.entry is None for k in self.kinds_before):
            del out["kinds_before"], out["kinds_after"]      # a profile without kinds
        if not self.start_distribution:
            del out["start_distribution"]                     # the uniform model
        else:
            out["start_distribution"] = {str(k): v for k, v in self.start_distribution.items()}
        if not self.padding:
            del out["padding"], out["padding_gains"]
        if self.transfers_before is None:
            del out["transfers_before"], out["transfers_after"]      # no sharing data
        out["order"] = list(self.order)
        out["merged"] = [asdict(m) for m in self.merged]
        out["constraints_honoured"] = list(self.constraints_honoured)
        out["hot_fields"] = list(self.hot_fields)
        out["warnings"] = list(self.warnings)
        return out
