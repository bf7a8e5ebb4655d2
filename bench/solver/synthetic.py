"""Seeded synthetic records and profiles shaped like kernel objects, for the solver benchmark.

A record of n fields mixes pointers, integers, flags, list heads, locks and a few arrays
(some larger than a cache line), laid out by C rules. A profile has a handful of "paths"
(sequences) with Zipf-like counts; each path touches a subset of the hot fields in one to
three object roles (the second and third roles touch subsets of the first's fields), and
writes some of them. Hot fields are scattered over the original layout, as in a record that
grew by accretion. Nothing here solves anything.
"""

from __future__ import annotations

import random
from typing import Any

from cachefit.model.profile import TypeProfile, type_from_json
from cachefit.model.record_layout import Field, Record

TYPES: list[tuple[str, int, int, float]] = [
    # type, size, align, relative frequency
    ("void *", 8, 8, 30), ("unsigned long", 8, 8, 12), ("int", 4, 4, 14),
    ("unsigned int", 4, 4, 8), ("short", 2, 2, 4), ("unsigned char", 1, 1, 6),
    ("bool", 1, 1, 4), ("struct list_head", 16, 8, 8), ("spinlock_t", 4, 4, 3),
    ("u64[2]", 16, 8, 3), ("char[16]", 16, 1, 2), ("struct timer", 40, 8, 2),
    ("unsigned long[8]", 64, 8, 1), ("struct sigpending", 24, 8, 2),
    ("char[128]", 128, 1, 0.5),
]


def make_record(n: int, rng: random.Random) -> Record:
    weights = [t[3] for t in TYPES]
    fields: list[Field] = []
    cursor, max_align = 0, 1
    for i in range(n):
        name, size, align, _ = rng.choices(TYPES, weights)[0]
        cursor = (cursor + align - 1) // align * align
        fields.append(Field(f"m{i:03d}", name, cursor, size, align))
        cursor += size
        max_align = max(max_align, align)
    size = (cursor + max_align - 1) // max_align * max_align
    return Record(f"synth{n}", "struct", size, max_align, fields)


def make_profile(record: Record, hot: int, paths: int, rng: random.Random,
                 groups: int | None = None) -> dict[str, Any]:
    """A profile type entry touching `hot` fields over `paths` sequences.

    Hot fields fall into feature groups (fields the same code touches together, e.g.
    scheduling state, message registers, timeouts); a path touches a union of groups in its
    first role, and subsets of those groups in further roles (like the two thread control
    blocks of an IPC). Counts fall off like Zipf's law.
    """
    hot_fields = rng.sample(record.fields, min(hot, len(record.fields)))
    ngroups = groups or max(2, min(12, len(hot_fields) // 5))
    feature: list[list[Field]] = [[] for _ in range(ngroups)]
    for i, f in enumerate(hot_fields):
        feature[i % ngroups if i < ngroups else rng.randrange(ngroups)].append(f)
    written = {f.name for f in hot_fields if rng.random() < 0.3}
    sequences = []
    for p in range(paths):
        count = max(1, int(1000 / (p + 1) ** 1.2))
        chosen = rng.sample(range(ngroups), rng.randint(1, max(1, ngroups * 2 // 3)))
        roles = [chosen]
        for _ in range(rng.randint(0, 2)):
            roles.append(rng.sample(chosen, max(1, len(chosen) // 2)))
        accesses = []
        for role, gs in enumerate(roles):
            for g in gs:
                for f in feature[g]:
                    mode = "w" if f.name in written and role == 0 else "r"
                    accesses.append([role, f.offset, min(f.size, 8), mode])
        sequences.append({"count": count, "accesses": accesses})
    # every feature group is touched at least once, by a rare sequence
    seen = {a[1] for s in sequences for a in s["accesses"]}
    missing = [f for f in hot_fields if f.offset not in seen]
    if missing:
        sequences.append({"count": 1, "accesses": [[0, f.offset, min(f.size, 8), "r"]
                                                   for f in missing]})
    return {"size": record.size,
            "fields": [{"name": f.name, "offset": f.offset, "size": f.size}
                       for f in record.fields],
            "sequences": sequences, "dropped": {"runaway": 0, "outside_objects": 0}}


def make_case(n: int, hot: int, paths: int, seed: int) -> tuple[Record, dict[str, Any]]:
    rng = random.Random(seed * 7919 + n)
    record = make_record(n, rng)
    return record, make_profile(record, hot, paths, rng)


def typed(entry: dict[str, Any] | TypeProfile) -> TypeProfile:
    """A generated profile entry as the typed object the layout stage takes."""
    return entry if isinstance(entry, TypeProfile) else type_from_json("bench", entry)
