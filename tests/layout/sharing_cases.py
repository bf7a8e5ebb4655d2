"""Hand-made profiles with thread sharing for the tests of layout.sharing (issue 30)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

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


# bench/threads/shared.c's declared order: per-thread counters, a read-mostly
# configuration and a lock with what it guards, interleaved on one line (80 bytes).
BENCH = c_layout("shared", [
    ("ops0", "unsigned long", 8, 8), ("mult", "unsigned long", 8, 8),
    ("sum0", "unsigned long", 8, 8), ("shift", "unsigned int", 4, 4),
    ("lock", "int", 4, 4), ("ops1", "unsigned long", 8, 8),
    ("add", "unsigned long", 8, 8), ("sum1", "unsigned long", 8, 8),
    ("rounds", "unsigned int", 4, 4), ("every", "unsigned int", 4, 4),
    ("total", "unsigned long", 8, 8), ("mask", "unsigned long", 8, 8)])
CONFIG = ("mult", "add", "mask", "shift", "rounds", "every")


def bench_profile() -> TypeProfile:
    """Each thread runs 1000 operations: each reads the configuration and bumps its own
    ops and sum; 20 of them also take the lock and add to total. Thread k's operations
    hand its counters over to the other thread 980 times (written opsK, sumK; touched the
    configuration and the other thread's counters), and 10 times right after a locked
    operation (written opsK, sumK, lock, total; the other thread's next operation does
    not take the lock)."""
    a = lambda n, m="r": acc(BENCH, n, m)  # noqa: E731
    r = lambda *n: ranges(BENCH, *n)  # noqa: E731

    def op(k: str) -> tuple[Access, ...]:
        return (*(a(c) for c in CONFIG), a("ops" + k), a("ops" + k, "w"), a("sum" + k),
                a("sum" + k, "w"))

    lock = (a("lock"), a("lock", "w"), a("total"), a("total", "w"), a("lock", "w"))
    return TypeProfile(
        "shared", BENCH.size, [FieldSpan(f.name, f.offset, f.size) for f in BENCH.fields],
        [AccessSequence(980, op("0"), "op"), AccessSequence(980, op("1"), "op"),
         AccessSequence(20, (*op("0"), *lock), "op"),
         AccessSequence(20, (*op("1"), *lock), "op")],
        alignment={0: 2000},
        sharing=TypeSharing(2, 2, handoffs=[
            Handoff(980, r("ops0", "sum0"), r(*CONFIG, "ops1", "sum1")),
            Handoff(980, r("ops1", "sum1"), r(*CONFIG, "ops0", "sum0")),
            Handoff(10, r("ops0", "sum0", "lock", "total"), r(*CONFIG, "ops1", "sum1")),
            Handoff(10, r("ops1", "sum1", "lock", "total"), r(*CONFIG, "ops0", "sum0"))]))


def compiled_offsets(tmp_path: Path, compiler: str, tag: str, order: Sequence[str],
                     padding: Mapping[str, int], decl: Mapping[str, str]) -> list[int]:
    """Declare `struct tag` as the rewriter declares a padded layout (a `char
    __cachefit_pad_<field>[N];` right before each padded field; `decl[name]` is the
    member's declaration), compile it with `compiler` (-Wall -Wextra -Werror) and return
    offsetof of each field of `order`, then sizeof."""
    members = []
    for name in order:
        if name in padding:
            members.append(f"    char __cachefit_pad_{name}[{padding[name]}];")
        members.append(f"    {decl[name]};")
    prints = "".join(f'    printf("%zu\\n", offsetof(struct {tag}, {n}));\n' for n in order)
    (tmp_path / "s.c").write_text(
        f"#include <stddef.h>\n#include <stdio.h>\nstruct {tag} {{\n" + "\n".join(members)
        + "\n};\nint main(void) {\n" + prints
        + f'    printf("%zu\\n", sizeof(struct {tag}));\n    return 0;\n}}\n')
    exe = tmp_path / "s"
    subprocess.run([compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(tmp_path / "s.c")], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return [int(v) for v in out.split()]
