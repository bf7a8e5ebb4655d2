"""Hand-made profiles with thread sharing for the tests of layout.sharing (issue 30)."""

from __future__ import annotations

from layout_synth import c_layout

from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Handoff,
    TypeProfile,
    TypeSharing,
)
from cachefit.model.record_layout import Record

# long c0, c1 (per-thread counters); int cfg[8] (read-mostly); int lock: one line.
STATS = c_layout("stats", [("c0", "long", 8, 8), ("c1", "long", 8, 8),
                           ("cfg", "int[8]", 32, 4), ("lock", "int", 4, 4)])


def acc(rec: Record, name: str, mode: str = "r") -> Access:
    f = rec.field_named(name)
    assert f is not None
    return Access(0, f.offset, f.size, mode)  # type: ignore[arg-type]


def ranges(rec: Record, *names: str) -> tuple[tuple[int, int], ...]:
    out = []
    for n in names:
        f = rec.field_named(n)
        assert f is not None
        out.append((f.offset, f.size))
    return tuple(sorted(out))


def stats_profile(handoffs_each: int, start: int = 0) -> TypeProfile:
    """Thread 0 reads cfg and bumps c0 (1000 times), thread 1 the same with c1; 10
    operations take the lock. `handoffs_each` times thread 1 ran after thread 0 wrote c0,
    and as often the other way round; the lock changed hands 10 times."""
    a = lambda n, m="r": acc(STATS, n, m)  # noqa: E731
    r = lambda *n: ranges(STATS, *n)  # noqa: E731
    return TypeProfile(
        "stats", STATS.size, [FieldSpan(f.name, f.offset, f.size) for f in STATS.fields],
        [AccessSequence(1000, (a("cfg"), a("c0"), a("c0", "w")), "work0"),
         AccessSequence(1000, (a("cfg"), a("c1"), a("c1", "w")), "work1"),
         AccessSequence(10, (a("lock"), a("lock", "w")), "sync")],
        alignment={start: 2010},
        sharing=TypeSharing(8, 2, handoffs=[
            Handoff(handoffs_each, r("c0"), r("c1", "cfg")),
            Handoff(handoffs_each, r("c1"), r("c0", "cfg")),
            Handoff(10, r("lock"), r("lock"))]))
