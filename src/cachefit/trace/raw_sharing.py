"""The sharing lines of a raw trace (issue 30) and their conversion into a type's sharing.

Once a second thread of a process has begun an invocation, the runtime tracks which
threads read and wrote which granules of each object and how often written granules
changed hands (runtime/src/cf_share.c), and the raw trace holds `threads`, `share`,
`shobj` and `handoff` lines (docs/raw-trace-format.md). This module parses those lines
(`parse_line`) into a `RawSharing` per type id, converts one into the profile's
`TypeSharing` (`type_sharing`: ranges clipped to the type's size, equal patterns added up).
It reads no files and knows nothing of sequences; cachefit.trace.raw_trace calls it, and
the profiles of several processes are added up by cachefit.model.profile_merge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from cachefit.model.profile import Handoff, SharedObject, TypeSharing

SHARE_KEYS = ("threads", "share", "shobj", "handoff")
"""The first words of the raw trace lines this module reads."""
THREAD_SLOTS = 16
"""Thread numbers the runtime tells apart per object: 0 .. 14, and 15 for 15 and above."""

Range = tuple[int, int]
Triple = tuple[int, int, int]


@dataclass
class RawSharing:
    """One type's `share` line and the `shobj` and `handoff` lines after it, as written:
    ranges are granule runs, not yet clipped to the type's size."""

    granule: int
    threads: int
    private: int
    lost: int
    shared: list[tuple[int, tuple[Triple, ...], tuple[Triple, ...]]] = field(
        default_factory=list)
    """(count, reads, writes)"""
    handoffs: list[tuple[int, tuple[Range, ...], tuple[Range, ...]]] = field(
        default_factory=list)
    """(count, written, touched)"""


def parse_line(key: str, rest: str, sharing: dict[int, RawSharing]) -> int | None:
    """Add one line (`key` one of SHARE_KEYS, `rest` the words after it) to `sharing`;
    returns N of a `threads N` line, else None. ValueError for a malformed line."""
    words = rest.split(" ")
    if key == "threads":
        n = _count(words[0], 1)
        if len(words) != 1:
            raise ValueError("threads line: one number expected")
        return n
    tid = _count(words[0], 0)
    if key == "share":
        if len(words) != 5:
            raise ValueError("share line: TYPE GRANULE THREADS PRIVATE LOST expected")
        granule = _count(words[1], 1)
        if granule & (granule - 1):
            raise ValueError(f"share line: granule {granule} is not a power of two")
        if tid in sharing:
            raise ValueError(f"second share line for type {tid}")
        sharing[tid] = RawSharing(granule, _count(words[2], 0), _count(words[3], 0),
                                  _count(words[4], 0))
        return None
    have = sharing.get(tid)
    if have is None:
        raise ValueError(f"{key} line before the share line of type {tid}")
    if len(words) < 3:
        raise ValueError(f"{key} line too short")
    count = _count(words[1], 1)
    if key == "shobj":
        reads: list[Triple] = []
        writes: list[Triple] = []
        for w in words[2:]:
            parts = w.split(":")
            if len(parts) != 4 or parts[0] not in ("r", "w"):
                raise ValueError(f"bad shared object word {w}")
            mode, thread, off, size = parts
            t = _count(thread, 0)
            if t >= THREAD_SLOTS:
                raise ValueError(f"bad thread in {w}")
            (reads if mode == "r" else writes).append(
                (t, *_range(off, size, have.granule)))
        have.shared.append((count, tuple(reads), tuple(writes)))
    elif key == "handoff":
        if len(words) != 5 or words[3] != "/":
            raise ValueError("handoff line: TYPE COUNT WRITTEN / TOUCHED expected")
        have.handoffs.append((count, _ranges(words[2], have.granule),
                              _ranges(words[4], have.granule)))
    return None


def _count(word: str, least: int) -> int:
    n = int(word)
    if n < least:
        raise ValueError(f"{n} is below {least}")
    return n


def _range(off: str, size: str, granule: int) -> Range:
    o, s = _count(off, 0), _count(size, 1)
    if o % granule or s % granule:
        raise ValueError(f"range {o}:{s} is not in granules of {granule}")
    return o, s


def _ranges(text: str, granule: int) -> tuple[Range, ...]:
    out = []
    for w in text.split(","):
        off, colon, size = w.partition(":")
        if not colon:
            raise ValueError(f"bad range {w}")
        out.append(_range(off, size, granule))
    return tuple(out)


def _clip(ranges: Iterable[Range], size: int) -> tuple[Range, ...]:
    """Ranges cut at `size` (0: unknown, not cut), empty ones dropped."""
    if not size:
        return tuple(sorted(ranges))
    return tuple(sorted((o, min(s, size - o)) for o, s in ranges if o < size))


def _clip3(triples: Iterable[Triple], size: int) -> tuple[Triple, ...]:
    if not size:
        return tuple(sorted(triples))
    return tuple(sorted((t, o, min(s, size - o)) for t, o, s in triples if o < size))


def type_sharing(raw: RawSharing, size: int) -> TypeSharing:
    """The profile's sharing of a type of `size` bytes (0: unknown) from its raw lines.
    Ranges are clipped to the size; a pattern that no longer has two threads counts as
    private objects, a handoff with nothing left written or touched is dropped; equal
    patterns are added up. `threads` is at least 1 + every thread number of the patterns
    (a thread numbered before them may not have touched the type while sharing was
    tracked). Sorted as TypeSharing.sort does."""
    shared: dict[tuple[tuple[Triple, ...], tuple[Triple, ...]], int] = {}
    private = raw.private
    for count, reads, writes in raw.shared:
        r, w = _clip3(reads, size), _clip3(writes, size)
        if len({t for t, _, _ in r + w}) < 2:
            private += count
        else:
            shared[(r, w)] = shared.get((r, w), 0) + count
    handoffs: dict[tuple[tuple[Range, ...], tuple[Range, ...]], int] = {}
    for count, written, touched in raw.handoffs:
        wr, to = _clip(written, size), _clip(touched, size)
        if wr and to:
            handoffs[(wr, to)] = handoffs.get((wr, to), 0) + count
    numbers = [t for r, w in shared for t, _, _ in r + w]
    threads = max([raw.threads, *(t + 1 for t in numbers)])
    out = TypeSharing(
        granule=raw.granule, threads=threads, private_objects=private, lost=raw.lost,
        shared=[SharedObject(n, r, w) for (r, w), n in shared.items()],
        handoffs=[Handoff(n, w, t) for (w, t), n in handoffs.items()])
    out.sort()
    return out
