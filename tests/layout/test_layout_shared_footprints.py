"""Many summaries that share footprints (issue 26): a profile of hundreds of summaries that
differ only in first-touch order, in which array elements they touch and in their hits
gives exactly the layout and the figures of its merged equivalent (one summary per kind and
footprint, its count the sum), and `read_footprints` (each distinct access mapped once)
gives the footprints a per-access reading gives, including fixed-area spans, unmapped
accesses and repeated accesses."""

from __future__ import annotations

import random

import pytest
from layout_synth import c_layout

from cachefit.layout import access_sets, evaluate_order, optimize_layout
from cachefit.layout.profile_footprints import read_footprints
from cachefit.model.profile import Access, AccessSequence, FieldSpan, TypeProfile
from cachefit.model.record_layout import Record

RECORD = c_layout("st", [
    ("head", "int", 4, 4), ("mode", "int", 4, 4), ("tree", "short[64]", 128, 2),
    ("pos", "long", 8, 8), ("win", "char[40]", 40, 1), ("cnt", "int[8]", 32, 4),
    ("last", "long", 8, 8), ("flags", "char", 1, 1), ("hash", "long[4]", 32, 8),
    ("tail", "int", 4, 4)])
FIELDS = [FieldSpan(f.name, f.offset, f.size) for f in RECORD.fields]

# Footprints: (touched fields, written fields) of role 0, per kind of operation.
FOOTPRINTS = {
    "deflate": [({"head", "tree", "pos", "cnt", "flags"}, {"tree", "cnt"}),
                ({"head", "mode", "tree", "hash", "tail"}, {"hash"}),
                ({"pos", "win", "last"}, set())],
    "match": [({"win", "pos", "last"}, {"last"}),
              ({"win", "pos"}, set())],
}


def _accesses(rng: random.Random, touched: set[str], written: set[str]) -> list[Access]:
    """Distinct accesses covering exactly `touched` (array fields: a few random elements,
    some written when the field is), each written field written at least once."""
    out: set[Access] = set()
    for name in sorted(touched):
        f = RECORD.field_named(name)
        assert f is not None
        elem = 2 if "short" in f.type else 4 if "int" in f.type else 8 if "long" in f.type \
            else 1
        picks = rng.sample(range(f.size // elem), min(f.size // elem, rng.randint(1, 6)))
        for k, i in enumerate(picks):
            mode = "w" if name in written and (k == 0 or rng.random() < 0.5) else "r"
            out.add(Access(0, f.offset + i * elem, elem, mode))  # type: ignore[arg-type]
            if mode == "w" and rng.random() < 0.5:
                out.add(Access(0, f.offset + i * elem, elem, "r"))
    return list(out)


def _profiles(seed: int, n: int) -> tuple[TypeProfile, TypeProfile]:
    """`n` summaries over FOOTPRINTS, and the merged equivalent."""
    rng = random.Random(seed)
    many: list[AccessSequence] = []
    merged: dict[tuple[str, int], int] = {}
    for _ in range(n):
        kind = rng.choice(sorted(FOOTPRINTS))
        fi = rng.randrange(len(FOOTPRINTS[kind]))
        accesses = _accesses(rng, *FOOTPRINTS[kind][fi])
        rng.shuffle(accesses)                      # another first-touch order
        count = rng.randint(1, 1000)
        many.append(AccessSequence(count, tuple(accesses), kind,
                                   tuple(rng.randint(count, 50 * count) for _ in accesses)))
        merged[(kind, fi)] = merged.get((kind, fi), 0) + count
    one = []
    for (kind, fi), count in sorted(merged.items()):
        touched, written = FOOTPRINTS[kind][fi]
        accesses = []
        for name in sorted(touched):
            f = RECORD.field_named(name)
            assert f is not None
            accesses.append(Access(0, f.offset, 1, "w" if name in written else "r"))
        one.append(AccessSequence(count, tuple(accesses), kind, tuple([count] * len(accesses))))
    return (TypeProfile("st", RECORD.size, FIELDS, many),
            TypeProfile("st", RECORD.size, FIELDS, one))


@pytest.mark.parametrize(("seed", "object_align"), [(0, 64), (1, None), (2, 16)])
def test_many_summaries_sharing_footprints_give_the_merged_layout(
        seed: int, object_align: int | None) -> None:
    many, one = _profiles(seed, 400)
    assert len(many.sequences) == 400 and len(one.sequences) == 5
    a = optimize_layout(RECORD, many, object_align=object_align, time_limit=2.0)
    b = optimize_layout(RECORD, one, object_align=object_align, time_limit=2.0)
    assert a.order == b.order
    assert (a.lines_before, a.lines_after, a.lines_lower_bound, a.dirty_before,
            a.dirty_after, a.size_after, a.invocations) == \
        (b.lines_before, b.lines_after, b.lines_lower_bound, b.dirty_before,
         b.dirty_after, b.size_after, b.invocations)
    assert a.kinds_before == b.kinds_before and a.kinds_after == b.kinds_after
    rng = random.Random(seed)
    names = [f.name for f in RECORD.fields]
    for _ in range(5):
        rng.shuffle(names)
        ea = evaluate_order(RECORD, many, names, object_align=object_align, allow_growth=True)
        eb = evaluate_order(RECORD, one, names, object_align=object_align, allow_growth=True)
        assert (ea.figures, ea.kinds, ea.offsets) == (eb.figures, eb.kinds, eb.offsets)


# --------------------------------------------------------- per-access reference reading


def _reference(record: Record, tp: TypeProfile, fixed_limit: int
               ) -> tuple[list[tuple[int, int, tuple[tuple[str, frozenset[str],
                                                             frozenset[str]], ...]]],
                          int, frozenset[str]]:
    """Footprints read access by access (what read_footprints gave before issue 26's
    change): per sequence (index, count, per role (touched, written)); unmapped accesses;
    straddled fields."""
    current = {f.name for f in record.fields}
    out = []
    unmapped = 0
    straddled: set[str] = set()
    for qi, seq in enumerate(tp.sequences):
        touched: dict[str, set[str]] = {}
        written: dict[str, set[str]] = {}
        fixed: dict[str, bool] = {}
        for a in seq.accesses:
            role = str(a.role)
            touched.setdefault(role, set())
            written.setdefault(role, set())
            mapped = a.offset < fixed_limit
            fixed[role] = fixed.get(role, False) or mapped
            for f in tp.fields:
                if f.name in current and f.offset < a.offset + a.size and \
                        a.offset < f.offset + f.size:
                    mapped = True
                    touched[role].add(f.name)
                    if a.mode == "w":
                        written[role].add(f.name)
                    if not (f.offset <= a.offset and a.offset + a.size <= f.offset + f.size):
                        straddled.add(f.name)
            unmapped += not mapped
        roles = tuple((r, frozenset(touched[r]), frozenset(written[r]))
                      for r in sorted(touched) if touched[r] or fixed.get(r))
        out.append((qi, seq.count, roles))
    return out, unmapped, frozenset(straddled)


@pytest.mark.parametrize("seed", range(4))
def test_footprints_match_a_per_access_reading(seed: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Literal sequences with repeats, summaries, two roles, accesses straddling fields,
    into padding and into fields the record no longer has: the same footprints as a
    reading access by access, and the same count of unmapped accesses (seed 3: the
    access numbering starts over at every table, as for a profile beyond its limit)."""
    if seed == 3:
        monkeypatch.setattr(access_sets, "KEEP_ACCESSES", 10)
    rng = random.Random(seed)
    record = c_layout("p", [("a", "char", 1, 1), ("b", "long", 8, 8), ("c", "int", 4, 4),
                            ("d", "char[20]", 20, 1), ("e", "long", 8, 8)])
    stored = [FieldSpan(f.name, f.offset, f.size) for f in record.fields] + \
        [FieldSpan("gone", record.size, 8)]
    seqs = []
    for _ in range(60):
        accesses = [Access(rng.randrange(2), rng.randrange(record.size + 8),
                           rng.choice((1, 2, 4, 8)), rng.choice("rw"))  # type: ignore[arg-type]
                    for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.5:
            accesses += rng.choices(accesses, k=rng.randint(1, 5))   # a literal's repeats
            seqs.append(AccessSequence(rng.randint(1, 9), tuple(accesses), "op"))
        else:
            unique = tuple(dict.fromkeys(accesses))
            seqs.append(AccessSequence(rng.randint(1, 9), unique, "sum",
                                       tuple([3] * len(unique))))
    tp = TypeProfile("p", record.size + 8, stored, seqs)
    want, unmapped, straddled = _reference(record, tp, 0)
    for _ in range(2):                  # the second time from the kept numbering
        got = read_footprints(record, tp, 0)
        assert [(s.index, s.count, tuple((r, fp.touched, fp.written) for r, fp in s.roles))
                for s in got.sequences] == want
        assert got.unmapped_accesses == unmapped
        assert got.straddled == straddled
