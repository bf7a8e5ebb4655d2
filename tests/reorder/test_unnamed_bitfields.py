"""Unnamed bit-fields (`int : 3;` padding, `int : 0;` barriers) move with the field before them.

Each record is reordered with `--order` (source mode) or `reorder_unit` (build-time mode,
a preprocessed unit), the result compiled with gcc 12 and clang-19 and run: the values of
the named members must not change, and the layout the compiler chose (byte offsets, bit
offsets of bit-fields, sizeof) must be exactly what the layout package planned for that
order — which it can only be if the model knows where the unnamed bit-fields go and the
rewriter puts them there. The model must also reproduce the original layout.
"""

from __future__ import annotations

import json
import random
import subprocess
import zlib
from pathlib import Path

import pytest
from layout_programs import (
    Member,
    header,
    load,
    predicted,
    program,
    reorder_unit_and_run,
    split,
    storage_order,
)
from reorder_helpers import C_COMPILERS, CXX_COMPILERS, build_and_run, write

pytestmark = pytest.mark.skipif(not C_COMPILERS, reason="no C compiler")

M = Member
RECORDS: dict[str, list[Member]] = {
    "pad-and-barrier": [M("c", "char"), M(None, "int", 3), M("d", "char"), M("x", "double"),
                        M("a", "unsigned", 4), M(None, "unsigned", 0), M("b", "unsigned", 5),
                        M("s", "short")],
    "leading": [M(None, "unsigned", 5), M(None, "unsigned", 0), M("c", "char"),
                M("a", "unsigned", 3), M("x", "int"), M("d", "char")],
    "consecutive": [M("a", "char"), M(None, "int", 4), M(None, "int", 6), M(None, "int", 0),
                    M("b", "char"), M(None, "long long", 0), M("c", "char"), M("s", "short"),
                    M("e", "unsigned", 2)],
    "split-declaration": [M("p, q", "int"), M(None, "int", 7), M("r", "char"),
                          M("z", "double"), M("t", "unsigned char", 3)],
    "does-not-fit": [M("x", "char"), M("c", "char[3]"), M(None, "int", 10), M("d", "char"),
                     M("e", "unsigned", 9), M("y", "short")],
    "straddle": [M("a", "unsigned", 30), M(None, "unsigned", 4), M("b", "unsigned", 3),
                 M("z", "char"), M("w", "long")],
    "bool": [M("f", "_Bool", 1), M(None, "unsigned char", 3), M("g", "_Bool", 1),
             M("y", "int"), M(None, "unsigned char", 0), M("h", "char"), M("k", "_Bool", 1)],
    "trailing": [M("a", "char"), M("b", "short"), M("c", "char"), M(None, "int", 0)],
}


def expand(members: list[Member]) -> list[Member]:
    """The members as the program sees them (`int p, q;` declares p and q)."""
    out = []
    for m in members:
        if m.name and "," in m.name:
            out += [Member(n.strip(), m.type, m.width) for n in m.name.split(",")]
        else:
            out.append(m)
    return out


def orders(names: list[str], seed: int, count: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = [list(reversed(names))]
    for _ in range(count - 1):
        order = names[:]
        rng.shuffle(order)
        out.append(order)
    return out


def check_record(tmp_path: Path, cachefit, members: list[Member], seed: int,
                 count: int = 3, cxx: bool = False) -> None:
    rec = tmp_path / "rec.h"
    main, std = ("main.cc", "-std=c++17") if cxx else ("main.c", "-std=c11")
    lang = ["-x", "c++", std] if cxx else [std]
    compilers = CXX_COMPILERS if cxx else C_COMPILERS
    write(tmp_path, {"rec.h": header(members, cxx), main: program(expand(members), cxx)})
    before = {cc: split(build_and_run(tmp_path, main, cc, std)) for cc in compilers}
    record = load(rec, lang)
    names = [f.name for f in record.fields]
    original, walls = predicted(record, names)
    assert not walls
    for cc in compilers:
        assert before[cc][1] == original, (cc, "the model does not match the original")
    text = rec.read_text()
    for order in orders(names, seed, count):
        rec.write_text(text)
        order = storage_order(record, order)
        expected, _ = predicted(record, order)
        code, _, err = cachefit("reorder", "rec", rec, "--order", ",".join(order),
                                "--in-place", "--", *lang)
        assert code == 0, err
        new = rec.read_text()
        assert new.count(":") >= text.count(":"), new   # no unnamed bit-field lost
        for cc in compilers:
            values, layout = split(build_and_run(tmp_path, main, cc, std))
            assert values == before[cc][0], (cc, new)
            assert layout == expected, (cc, order, new)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_unnamed_bit_fields_keep_the_planned_layout(tmp_path: Path, cachefit, name: str
                                                    ) -> None:
    check_record(tmp_path, cachefit, RECORDS[name], seed=zlib.crc32(name.encode()))


@pytest.mark.parametrize("name", ["pad-and-barrier", "bool", "leading"])
def test_unnamed_bit_fields_in_cxx(tmp_path: Path, cachefit, name: str) -> None:
    check_record(tmp_path, cachefit, RECORDS[name], seed=7, count=2, cxx=True)


def test_split_declaration_keeps_padding_after_its_field(tmp_path: Path, cachefit) -> None:
    """`int p, q; int : 7;` split into p and q: the padding stays right after q."""
    members = RECORDS["split-declaration"]
    write(tmp_path, {"rec.h": header(members)})
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", "q,z,p,r,t",
                            "--in-place", "--", "-std=c11")
    assert code == 0, err
    lines = [ln.strip() for ln in (tmp_path / "rec.h").read_text().splitlines()]
    assert lines.index("int : 7;") == lines.index("int q;") + 1, lines


PAD_TYPES = [("unsigned char", 8), ("unsigned short", 16), ("unsigned int", 32),
             ("unsigned long long", 64)]
NAMED = [("unsigned char", 8), ("unsigned int", 32), ("_Bool", 1), ("char", None),
         ("short", None), ("int", None), ("long", None), ("char[3]", None)]


def random_members(rng: random.Random, n: int) -> list[Member]:
    out: list[Member] = []
    for i in range(n):
        t, bits = rng.choice(NAMED)
        out.append(Member(f"f{i}", t, rng.randint(1, bits) if bits else None))
        if rng.random() < 0.45:
            pt, pbits = rng.choice(PAD_TYPES)
            out.append(Member(None, pt, rng.choice([0, rng.randint(1, pbits)])))
    if rng.random() < 0.3:
        pt, pbits = rng.choice(PAD_TYPES)
        out.insert(0, Member(None, pt, rng.randint(0, pbits)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_random_records_with_unnamed_bit_fields(tmp_path: Path, cachefit, seed: int) -> None:
    rng = random.Random(7000 + seed)
    check_record(tmp_path, cachefit, random_members(rng, rng.randint(4, 8)), seed, count=2)


def test_optimizer_plans_with_unnamed_bit_fields(tmp_path: Path, cachefit) -> None:
    members = RECORDS["pad-and-barrier"]
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    record = load(tmp_path / "rec.h", ["-std=c11"])
    offsets = {f.name: f.offset for f in record.fields}
    hot = ["c", "s", "b"]
    profile = {"format": "cachefit-profile", "version": 1, "cache_line": 8,
               "invocations": 10,
               "types": {"rec": {"size": record.size, "fields": [
                   {"name": f.name, "offset": f.offset, "size": f.size}
                   for f in record.fields],
                   "sequences": [{"count": 10, "accesses": [[0, offsets[n], 1, "r"]
                                                            for n in hot]}],
                   "dropped": {}}}}
    write(tmp_path, {"p.json": json.dumps(profile)})
    before = split(build_and_run(tmp_path, "main.c", "gcc", "-std=c11"))
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--profile",
                              tmp_path / "p.json", "--json", "--in-place", "--", "-std=c11")
    assert code == 0, err
    report = json.loads(out)
    assert report["lines"]["after"] < report["lines"]["before"]
    expected, _ = predicted(record, report["new_order"])
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[0] and layout == expected, cc


@pytest.mark.parametrize("name", ["consecutive", "leading"])
def test_build_time_mode_keeps_the_planned_layout(tmp_path: Path, name: str) -> None:
    """reorder_unit on a unit each compiler preprocessed (.i) with unnamed bit-fields. The
    program reads the record through a byte pointer, so the first field stays first."""
    members = RECORDS[name]
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    before = split(build_and_run(tmp_path, "main.c", "gcc", "-std=c11"))
    for cc in C_COMPILERS:
        unit = tmp_path / f"main-{cc}.i"
        subprocess.run([cc, "-std=c11", "-E", "-o", str(unit), str(tmp_path / "main.c")],
                       check=True)
        record = load(unit, ["-std=c11"])
        names = [f.name for f in record.fields]
        order = storage_order(record, names[:1] + list(reversed(names[1:])))
        assert order != names
        values, layout, expected = reorder_unit_and_run(tmp_path, cc, unit, record, order)
        assert values == before[0] and layout == expected, cc


def test_barrier_goes_before_leading_padding(tmp_path: Path, cachefit) -> None:
    """The padding before every named field opens f0's unit; when that unit needs a
    barrier (f2's free bits before it), the barrier goes before the padding."""
    members = [M(None, "unsigned long long", 12), M("f0", "char[3]"),
               M("f1", "unsigned char", 1), M(None, "unsigned long long", 48),
               M("f2", "unsigned char", 5)]
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    before = split(build_and_run(tmp_path, "main.c", "gcc", "-std=c11"))
    record = load(tmp_path / "rec.h", ["-std=c11"])
    expected, walls = predicted(record, ["f2", "f0", "f1"])
    assert list(walls) == ["f0"]
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", "f2,f0,f1",
                            "--in-place", "--", "-std=c11")
    assert code == 0, err
    lines = [ln.strip() for ln in (tmp_path / "rec.h").read_text().splitlines()]
    wall = next(i for i, ln in enumerate(lines) if "new bit-field unit" in ln)
    assert lines[wall + 1:wall + 3] == ["unsigned long long : 12;", "char f0[3];"], lines
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[0] and layout == expected, cc
