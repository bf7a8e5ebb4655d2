"""Merge sequences by footprint inclusion (paper §IV.B.4), an optional pre-solve step.

A sequence whose footprint, role by role, is included in that of a heavier sequence adds
its count to that sequence and is dropped from what the solver optimises. Only touched
fields (and fixed-area spans) are compared, not the order or mode of accesses. This module
does not decide whether to merge (the caller's `merge` flag does) and never changes the
footprints used to predict lines before and after.
"""

from __future__ import annotations

from dataclasses import dataclass

from cachefit.layout.profile_footprints import RoleFootprint, SequenceFootprint


@dataclass(frozen=True)
class MergedSequence:
    """Sequence `index` (profile order) with `count` invocations was merged into `into`."""

    index: int
    into: int
    count: int


def _included(small: SequenceFootprint, big: SequenceFootprint) -> bool:
    big_roles = dict(big.roles)
    for role, fp in small.roles:
        other = big_roles.get(role)
        if other is None or not other.includes(fp):
            return False
    return True


def merge_by_inclusion(
        sequences: tuple[SequenceFootprint, ...],
) -> tuple[tuple[SequenceFootprint, ...], tuple[MergedSequence, ...]]:
    """Return the kept sequences (with increased counts) and what was merged into what.

    Sequences are visited from heaviest to lightest (ties: profile order); each is merged
    into the heaviest already kept sequence that includes it, if any. Deterministic; the
    inclusion tests are made once per distinct footprint.
    """
    order = sorted(sequences, key=lambda s: (-s.count, s.index))
    kept: list[SequenceFootprint] = []
    extra: dict[int, int] = {}
    merged: list[MergedSequence] = []
    # Sequences with the same footprint go to the same place (issue 26: thousands of
    # summaries share a few dozen footprints): the first of them, heaviest, finds it.
    # If it is kept, a later one is included in it and in no kept sequence before it;
    # if it is merged into a host, the later one is included in that host and in no
    # kept sequence before the host.
    place: dict[tuple[tuple[str, RoleFootprint], ...], SequenceFootprint] = {}
    for seq in order:
        host = place.get(seq.roles) if seq.roles else None
        if host is None and seq.roles and seq.roles not in place:
            # `kept` is heaviest first, so the first host found is the heaviest one.
            host = next((k for k in kept if _included(seq, k)), None)
            place[seq.roles] = seq if host is None else host
        if host is None:
            kept.append(seq)
            continue
        extra[host.index] = extra.get(host.index, 0) + seq.count
        merged.append(MergedSequence(seq.index, host.index, seq.count))
    result = tuple(
        SequenceFootprint(k.index, k.count + extra.get(k.index, 0), k.roles, k.entry)
        for k in sorted(kept, key=lambda s: s.index))
    return result, tuple(sorted(merged, key=lambda m: m.index))
