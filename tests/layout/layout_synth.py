"""Seeded random records and profiles for the layout tests, and an independent oracle.

Records are laid out by C rules (no bit-fields). The oracle re-implements, without using
cachefit.layout, what the optimizer promises: place fields in an order by C rules, map each
access to the fields it overlaps in the profile's stored layout, count the distinct lines
of the touched (and written) fields per sequence and role, weight by count, sum over object
start offsets. It enumerates all orders, so it is only usable for a handful of fields.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from cachefit.model.profile import TypeProfile, type_from_json
from cachefit.model.record_layout import Field, Record

TYPES = [("char", 1, 1), ("short", 2, 2), ("int", 4, 4), ("long", 8, 8),
         ("char[3]", 3, 1), ("int[3]", 12, 4), ("long[2]", 16, 8), ("char[20]", 20, 1),
         ("long[3]", 24, 8), ("struct pair", 16, 8)]


def c_layout(name: str, decls: Sequence[tuple[str, str, int, int]]) -> Record:
    """Lay out (name, type, size, align) declarations like a C compiler (no bit-fields)."""
    fields, cursor, max_align = [], 0, 1
    for fname, ftype, size, align in decls:
        cursor = (cursor + align - 1) // align * align
        fields.append(Field(fname, ftype, cursor, size, align))
        cursor += size
        max_align = max(max_align, align)
    size = (cursor + max_align - 1) // max_align * max_align
    return Record(name, "struct", size, max_align, fields)


def profile_entry(record: Record, sequences: Sequence[tuple[int, list[list[Any]]]]
                  ) -> dict[str, Any]:
    return {"size": record.size,
            "fields": [{"name": f.name, "offset": f.offset, "size": f.size}
                       for f in record.fields],
            "sequences": [{"count": c, "accesses": a} for c, a in sequences],
            "dropped": {"runaway": 0, "outside_objects": 0}}


def access(record: Record, role: int, name: str, mode: str = "r") -> list[Any]:
    f = record.field_named(name)
    assert f is not None
    return [role, f.offset, min(f.size, 8) or 1, mode]


def random_case(rng: random.Random, max_fields: int = 8) -> tuple[Record, dict[str, Any]]:
    n = rng.randint(2, max_fields)
    decls = [(f"f{i}", *rng.choice(TYPES)) for i in range(n)]
    record = c_layout("rnd", decls)
    names = [f.name for f in record.fields]
    sequences = []
    for _ in range(rng.randint(1, 4)):
        accesses = []
        for role in range(rng.randint(1, 2)):
            for name in rng.sample(names, rng.randint(1, n)):
                accesses.append(access(record, role, name, rng.choice("rrw")))
        sequences.append((rng.randint(1, 9), accesses))
    return record, profile_entry(record, sequences)


class Oracle:
    """Cost of any field order of `record` under `entry`, computed from first principles."""

    def __init__(self, record: Record, entry: dict[str, Any], *, cache_line: int,
                 object_align: int | None = None) -> None:
        self.record = record
        self.line = cache_line
        align = object_align or record.align
        self.starts = [0] if align >= cache_line else list(range(0, cache_line, align))
        self.fields = {f.name: f for f in record.fields}
        stored = entry["fields"]
        self.invocations = sum(seq["count"] for seq in entry["sequences"])
        self.footprints: list[tuple[int, frozenset[str], frozenset[str]]] = []
        for seq in entry["sequences"]:
            touched: dict[Any, set[str]] = {}
            written: dict[Any, set[str]] = {}
            for role, off, size, mode in seq["accesses"]:
                for f in stored:
                    if f["offset"] < off + size and off < f["offset"] + f["size"]:
                        touched.setdefault(role, set()).add(f["name"])
                        if mode == "w":
                            written.setdefault(role, set()).add(f["name"])
            for role in touched:
                self.footprints.append((seq["count"], frozenset(touched[role]),
                                        frozenset(written.get(role, ()))))

    def limit(self) -> int:
        return -(-self.record.size // self.line) * self.line

    def offsets(self, order: Sequence[str]) -> tuple[dict[str, int], int]:
        cursor, out = 0, {}
        for name in order:
            f = self.fields[name]
            cursor = -(-cursor // f.align) * f.align
            out[name] = cursor
            cursor += f.size
        return out, -(-cursor // self.record.align) * self.record.align

    def _lines(self, names: frozenset[str], offsets: dict[str, int], start: int) -> int:
        seen = set()
        for n in names:
            b, size = start + offsets[n], self.fields[n].size
            seen.update(range(b // self.line, (b + size - 1) // self.line + 1))
        return len(seen)

    def cost(self, order: Sequence[str]) -> tuple[int, int]:
        """(lines, dirty lines), weighted and summed over start offsets."""
        offsets, _ = self.offsets(order)
        lines = dirty = 0
        for count, touched, written in self.footprints:
            for s in self.starts:
                lines += count * self._lines(touched, offsets, s)
                dirty += count * self._lines(written, offsets, s)
        return lines, dirty

    def best(self, valid: Callable[[tuple[str, ...], dict[str, int]], bool] | None = None
             ) -> tuple[int, int]:
        """The lexicographically smallest (lines, dirty) over orders within the size limit
        (and accepted by `valid(order, offsets)`)."""
        names = [f.name for f in self.record.fields]
        best = None
        for order in itertools.permutations(names):
            offsets, size = self.offsets(order)
            if size > self.limit() or (valid is not None and not valid(order, offsets)):
                continue
            c = self.cost(order)
            if best is None or c < best:
                best = c
        assert best is not None
        return best

    def per_invocation(self, total: int) -> float:
        """A weighted total as the optimizer reports it: per invocation, per start."""
        return total / (self.invocations * len(self.starts))


def large_case(n: int, hot: int, seed: int) -> tuple[Record, dict[str, Any]]:
    """A record of n fields (pointers, ints, list heads, a few arrays) and a profile whose
    paths touch unions of feature groups of `hot` fields, in up to two roles."""
    rng = random.Random(seed)
    kinds = [("void *", 8, 8), ("int", 4, 4), ("long", 8, 8), ("char", 1, 1),
             ("struct list_head", 16, 8), ("short", 2, 2), ("u8[24]", 24, 1),
             ("long[9]", 72, 8)]
    decls = [(f"m{i:03d}", *rng.choices(kinds, [30, 20, 12, 8, 8, 4, 2, 1])[0])
             for i in range(n)]
    record = c_layout(f"big{n}", decls)
    hot_fields = rng.sample(record.fields, hot)
    groups = [hot_fields[i::6] for i in range(6)]
    sequences = []
    for p in range(6):
        chosen = rng.sample(range(6), rng.randint(1, 4))
        accesses = []
        for role, gs in enumerate([chosen, chosen[:1]]):
            for g in gs:
                for f in groups[g]:
                    accesses.append([role, f.offset, min(f.size, 8),
                                     "w" if (int(f.name[1:]) + role) % 3 == 0 else "r"])
        sequences.append((max(1, 400 // (p + 1)), accesses))
    return record, profile_entry(record, sequences)


BENCH_SYNTHETIC = Path(__file__).resolve().parents[2] / "bench" / "solver" / "synthetic.py"
"""The solver bench's record generator (bench/solver/synthetic.py)."""


def bench_synthetic() -> ModuleType:
    """bench/solver/synthetic.py as a module (its `make_case(fields, touched, paths, seed)`
    makes the bench's records), loaded once."""
    module = sys.modules.get("bench_synthetic")
    if module is None:
        spec = importlib.util.spec_from_file_location("bench_synthetic", BENCH_SYNTHETIC)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_synthetic"] = module
        spec.loader.exec_module(module)
    return module


def typed(entry: dict[str, Any] | TypeProfile, name: str = "t") -> TypeProfile:
    """A hand-written type entry (the version 1 JSON shape these tests write) as the typed
    object the layout stage takes, read by the profile module (cachefit.model.profile)."""
    if isinstance(entry, TypeProfile):
        return entry
    return type_from_json(name, entry)
