"""The fast path of a raw trace's `seq` and `sum` lines: their access words in bulk.

A version 2 `seq`/`sum` line (docs/raw-trace-format.md) holds up to tens of thousands of
words `ROLE:OFFSET:SIZE:MODE` (a summary's with `:HITS`), most of them repeated within
the file. `WordTable.sequence` reads a line with a few C-level passes and no Python work
per word: a summary's words become `ROLE:OFFSET:SIZE:MODE HITS` (two `replace`), one
`split`, the words looked up in a per-file table by `itemgetter` (a word is parsed only the
first time the file shows it, so equal words share one `Access`), the hits decoded as
one JSON list by msgspec.

It takes only lines in the canonical form the runtime writes: single spaces, ASCII
decimal numbers, the word count the line states. For anything else it returns None and
cachefit.trace.raw_trace parses the line word by word, which accepts every line this
accepts, with the same values, and gives the errors for malformed ones; so a line has
one meaning whichever path reads it. It reads no files and raises nothing.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import cast

import msgspec

from cachefit.model.profile import Access, Mode

_HEAD = re.compile(r"(-?[0-9]+) (-?[0-9]+) (-?[0-9]+) ([0-9]+) ")
"""TYPE ENTRY COUNT LEN and the space before the first word."""
_WORD = re.compile(r"([0-9]+):([0-9]+):([0-9]+):([rw])")
_INTS = msgspec.json.Decoder(tuple[int, ...])
"""A summary's hits joined by commas: a JSON number is what int() reads from the same
digits; a token JSON refuses (leading zero, `+`, `_`, ...) goes to the word-by-word
parser."""

Parsed = tuple[int, int, int, tuple[Access, ...], tuple[int, ...] | None]
"""A line's type id, entry, count, accesses and (a summary's) hits."""


class WordTable:
    """The distinct access words of one raw trace file, each parsed once."""

    def __init__(self) -> None:
        self.accesses: dict[str, Access] = {}
        """`ROLE:OFFSET:SIZE:MODE` -> its Access (shared with the word-by-word parser)."""

    def sequence(self, rest: str, summary: bool) -> Parsed | None:
        """A version 2 line's words after `seq`/`sum` parsed, or None when the line is not
        in the canonical form (then the word-by-word parser decides)."""
        head = _HEAD.match(rest)
        if head is None:
            return None
        n = int(head[4])
        hits: tuple[int, ...] | None = None
        if summary:
            # `R:O:S:M:HITS` -> `R:O:S:M HITS`: after the head, words and hits alternate
            tokens = rest.replace(":r:", ":r ").replace(":w:", ":w ").split(" ")
            if len(tokens) != 4 + 2 * n:
                return None
            words = tokens[4::2]
            text = ",".join(tokens[5::2])
            if "\t" in text or "\r" in text:
                return None         # JSON would take them for spaces, split() for separators
            try:
                hits = _INTS.decode(f"[{text}]")
            except msgspec.DecodeError:
                return None
            if len(hits) != n:
                return None
        else:
            words = rest.split(" ")[4:]
            if len(words) != n:
                return None
        table = self.accesses
        get = itemgetter(*words)    # (n >= 1: the head's space is followed by a word)
        try:
            accesses = get(table)
        except KeyError:
            if not self._learn(words):
                return None
            accesses = get(table)
        if n == 1:
            accesses = (accesses,)  # itemgetter of one item gives the item
        return int(head[1]), int(head[2]), int(head[3]), accesses, hits

    def _learn(self, words: list[str]) -> bool:
        """Parse the words not seen before; False when one is not canonical."""
        table = self.accesses
        for word in set(words).difference(table):
            m = _WORD.fullmatch(word)
            if m is None:
                return False
            table[word] = Access(int(m[1]), int(m[2]), int(m[3]), cast(Mode, m[4]))
        return True
