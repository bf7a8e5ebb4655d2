"""Sequences reduced to what they touch: distinct accesses, and per-sequence token sets.

Everything the layout stage and the report compute per sequence (footprints, lines, dirty
lines, the heat map) depends on which distinct accesses a sequence makes, not on their
order (issue 26). A summary of a long invocation lists up to thousands of distinct
accesses, yet they hit a few dozen fields, and thousands of summaries differ only in their
first-touch order. `access_table` numbers the distinct accesses of some sequences and gives
each sequence its accesses' numbers; a caller maps each distinct access to a
*token* once (`AccessTable.tokens`: the fields it hits, the lines it costs, ...; equal
tokens share a number) and gets every sequence's set of token numbers through set
operations done in C (`token_sets`, `token_counts`). The Python work per sequence is then
proportional to its tokens, not to its accesses.

The numbering is kept for the process, with each sequence's numbers (keyed by the identity
of its immutable accesses tuple), so the several evaluations of one profile (layout, report
before and after) build them once; past `KEEP_ACCESSES` a new numbering starts (tables
already handed out keep theirs). This module decides nothing about layouts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import count, islice
from typing import Generic, TypeVar

from cachefit.model.profile import Access, AccessSequence

T = TypeVar("T", bound=Hashable)

KEEP_ACCESSES = 1 << 23
"""The numbering keeps the numbers of at most about this many accesses (then starts
over)."""


@dataclass
class _Numbering:
    ids: dict[Access, int] = field(default_factory=dict)
    accesses: dict[int, Access] = field(default_factory=dict)
    sets: dict[int, tuple[Sequence[Access], tuple[int, ...]]] = field(default_factory=dict)
    next: int = 0
    kept: int = 0

    def has(self, accesses: Sequence[Access]) -> bool:
        hit = self.sets.get(id(accesses))
        return hit is not None and hit[0] is accesses

    def numbers(self, accesses: Sequence[Access]) -> tuple[int, ...]:
        """The numbers of `accesses`, in order (numbering the new ones)."""
        hit = self.sets.get(id(accesses))
        if hit is not None and hit[0] is accesses:
            return hit[1]
        known = len(self.ids)
        # One pass in C: a new access gets its position's number (numbers need not be
        # dense), a known one keeps its own.
        got = tuple(map(self.ids.setdefault, accesses, count(self.next)))
        self.next += len(accesses)
        for a, i in islice(reversed(self.ids.items()), len(self.ids) - known):
            self.accesses[i] = a
        if isinstance(accesses, tuple):       # a list could change: not kept
            self.sets[id(accesses)] = (accesses, got)
            self.kept += len(accesses)
        return got


_NUMBERING = _Numbering()


@dataclass(frozen=True)
class Tokens(Generic[T]):
    """Distinct tokens (`values`, numbered by position) and each access's token number."""

    values: list[T]
    of: dict[int, int]


@dataclass(frozen=True)
class AccessTable:
    """Some sequences' accesses by number: `accesses[i]` is access number i, `numbers[k]`
    the numbers of sequence k's accesses in order (a tuple of numbers takes a fraction of
    the memory of a set)."""

    accesses: dict[int, Access]
    numbers: tuple[tuple[int, ...], ...]

    def used(self) -> frozenset[int]:
        """The numbers of the accesses the sequences make."""
        return frozenset().union(*self.numbers)

    def tokens(self, token: Callable[[Access], T]) -> Tokens[T]:
        """`token` of every access the sequences make, each computed once; equal tokens
        get one number."""
        number: dict[T, int] = {}
        of = {i: number.setdefault(token(self.accesses[i]), len(number))
              for i in sorted(self.used())}
        return Tokens(list(number), of)

    def token_sets(self, tokens: Tokens[T]) -> list[frozenset[int]]:
        """Per sequence, the set of its accesses' token numbers."""
        get = tokens.of.__getitem__
        return [frozenset(map(get, s)) for s in self.numbers]

    def token_counts(self, k: int, tokens: Tokens[T]) -> Counter[int]:
        """How many of sequence k's accesses, repeats included, have each token number."""
        return Counter(map(tokens.of.__getitem__, self.numbers[k]))


def access_table(sequences: Sequence[AccessSequence]) -> AccessTable:
    """The distinct accesses of `sequences`, numbered, and each one's numbers."""
    global _NUMBERING
    numbering = _NUMBERING
    if numbering.kept + sum(len(s.accesses) for s in sequences
                            if not numbering.has(s.accesses)) > KEEP_ACCESSES:
        numbering = _NUMBERING = _Numbering()
    return AccessTable(numbering.accesses,
                       tuple(numbering.numbers(s.accesses) for s in sequences))
