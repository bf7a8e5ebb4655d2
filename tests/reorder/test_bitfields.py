"""Bit-field records: the placement model agrees with gcc and clang-19 after rewriting.

Seeded random records mix unsigned bit-fields of several storage types with plain members.
Each is reordered (a random `--order`, and the optimizer on a random profile), rewritten,
compiled with gcc and clang-19, and run: the program prints every member's value (must not
change) and its layout (byte offset of plain members, bit offset of bit-fields found by
setting the bit-field's bits in a zeroed object, sizeof), which must be exactly what the
layout package predicted for that order.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from layout_programs import FIRST_BIT, predicted, split
from reorder_helpers import C_COMPILERS, build_and_run, write

from cachefit.frontend.clang_records import load_record
from cachefit.layout import evaluate_order
from cachefit.pipeline.unit_transform import reorder_unit
from cachefit.reorder.order_choice import empty_profile_entry

pytestmark = pytest.mark.skipif(not C_COMPILERS, reason="no C compiler")

BITFIELD_TYPES = [("unsigned char", 8), ("unsigned short", 16), ("unsigned int", 32),
                  ("unsigned long long", 64), ("_Bool", 1)]
PLAIN_TYPES = ["char", "short", "int", "long", "void *", "char[3]"]


def random_record(rng: random.Random, n: int) -> list[tuple[str, str, int | None]]:
    """(name, type, width or None) per member, at least two bit-fields."""
    out: list[tuple[str, str, int | None]] = []
    for i in range(n):
        if rng.random() < 0.55 or i < 2:
            t, bits = rng.choice(BITFIELD_TYPES)
            out.append((f"f{i}", t, rng.randint(1, bits)))
        else:
            out.append((f"f{i}", rng.choice(PLAIN_TYPES), None))
    rng.shuffle(out)
    return out


def declaration(member: tuple[str, str, int | None]) -> str:
    name, t, width = member
    if t == "char[3]":
        return f"char {name}[3];"
    return f"{t} {name} : {width};" if width is not None else f"{t} {name};"


def header(members: list[tuple[str, str, int | None]]) -> str:
    body = "".join(f"    {declaration(m)}\n" for m in members)
    return f"#include <stddef.h>\nstruct rec {{\n{body}}};\n"


def program(members: list[tuple[str, str, int | None]]) -> str:
    """Sets every member, prints the values, then the layout the compiler chose."""
    lines = ['#include <stdio.h>', '#include <string.h>', '#include "rec.h"',
             FIRST_BIT, "static void layout(void) {", "    struct rec r;"]
    for name, _t, width in members:
        if width is None:
            lines.append(f'    printf("{name} byte %zu\\n", offsetof(struct rec, {name}));')
            continue
        lines += ["    memset(&r, 0, sizeof r);",
                  f"    r.{name} = {(1 << width) - 1}ULL;",
                  f'    printf("{name} bit %d\\n", first_bit((const unsigned char *)&r, '
                  "(int)(8 * sizeof r)));"]
    lines += ['    printf("size %zu\\n", sizeof(struct rec));', "}",
              "int main(void) {", "    struct rec r;", "    memset(&r, 0, sizeof r);"]
    for k, (name, t, width) in enumerate(members):
        if t == "char[3]":
            lines.append(f"    r.{name}[1] = {k + 1};")
        elif t == "void *":
            lines.append(f"    r.{name} = (void *)&r;")
        else:
            value = (k * 37 + 5) % (1 << min(width or 7, 8))
            lines.append(f"    r.{name} = {value};")
    for name, t, _width in members:
        if t == "char[3]":
            lines.append(f'    printf("{name}=%d\\n", r.{name}[1]);')
        elif t == "void *":
            lines.append(f'    printf("{name}=%d\\n", r.{name} == (void *)&r);')
        else:
            lines.append(f'    printf("{name}=%llu\\n", (unsigned long long)r.{name});')
    lines += ["    layout();", "    return 0;", "}"]
    return "\n".join(lines) + "\n"


def predicted_layout(rec_path: Path, order: list[str]) -> tuple[dict[str, str], int]:
    """What the layout package predicts for `order`, in the program's output format, and
    the number of zero-width bit-field barriers it needs."""
    expected, barriers = predicted(load_record(str(rec_path), ["-std=c11"], "rec"), order)
    return expected, len(barriers)


def storage_order(rec_path: Path, order: list[str]) -> list[str]:
    """`order` adjusted so that fields sharing a storage unit stay together."""
    record = load_record(str(rec_path), ["-std=c11"], "rec")
    return list(evaluate_order(record, empty_profile_entry(record), order,
                               allow_growth=True).order)


@pytest.mark.parametrize("seed", range(8))
def test_given_order_layout_matches_gcc_and_clang(tmp_path: Path, cachefit, seed: int
                                                  ) -> None:
    rng = random.Random(1000 + seed)
    members = random_record(rng, rng.randint(5, 10))
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    before = {cc: split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
              for cc in C_COMPILERS}
    names = [m[0] for m in members]
    # The model reproduces the compiler's original layout exactly, without barriers.
    original, walls = predicted_layout(tmp_path / "rec.h", names)
    assert walls == 0
    for cc in C_COMPILERS:
        assert before[cc][1] == original, cc
    order = names[:]
    rng.shuffle(order)
    order = storage_order(tmp_path / "rec.h", order)
    expected, _ = predicted_layout(tmp_path / "rec.h", order)
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", ",".join(order),
                            "--in-place", "--", "-std=c11")
    assert code == 0, err
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[cc][0], cc
        assert layout == expected, (cc, (tmp_path / "rec.h").read_text())


def test_barrier_keeps_a_moved_bit_field_out_of_free_bits(tmp_path: Path, cachefit) -> None:
    """`c:5` moved right after `a:3` would be packed into a's byte (bit 3); the placement
    keeps units apart, so the rewriter declares a zero-width bit-field before c. `b` after
    `c:30` would not fit in the rest of c's unit anyway: no barrier there."""
    members = [("a", "unsigned int", 3), ("x", "int", None), ("c", "unsigned int", 5),
               ("y", "int", None), ("d", "unsigned int", 30), ("b", "unsigned int", 5)]
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    before = split(build_and_run(tmp_path, "main.c", "gcc", "-std=c11"))
    order = ["a", "c", "x", "d", "b", "y"]
    expected, walls = predicted_layout(tmp_path / "rec.h", order)
    assert walls == 1 and expected["c bit"] == "32" and expected["b bit"] == "128"
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", ",".join(order),
                            "--in-place", "--", "-std=c11")
    assert code == 0, err
    text = (tmp_path / "rec.h").read_text()
    assert text.count(" : 0;") == 1
    assert text.index("unsigned int a") < text.index("unsigned int : 0;") < \
        text.index("unsigned int c")
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[0] and layout == expected, cc


@pytest.mark.parametrize("seed", range(3))
def test_optimizer_on_bit_field_record_matches_the_compilers(tmp_path: Path, cachefit,
                                                             seed: int) -> None:
    rng = random.Random(2000 + seed)
    members = random_record(rng, 10)
    write(tmp_path, {"rec.h": header(members), "main.c": program(members)})
    record = load_record(str(tmp_path / "rec.h"), ["-std=c11"], "rec")
    fields = [{"name": f.name, "offset": f.offset, "size": f.size} for f in record.fields]
    sequences = []
    for _ in range(3):
        hot = rng.sample(record.fields, 4)
        sequences.append({"count": rng.randint(1, 50), "accesses": [
            [0, f.offset, 1, rng.choice("rw")] for f in hot]})
    profile = {"format": "cachefit-profile", "version": 1, "cache_line": 16,
               "invocations": 100,
               "types": {"rec": {"size": record.size, "fields": fields,
                                 "sequences": sequences, "dropped": {}}}}
    write(tmp_path, {"p.json": json.dumps(profile)})
    before = split(build_and_run(tmp_path, "main.c", C_COMPILERS[0], "-std=c11"))
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--profile",
                              tmp_path / "p.json", "--json", "--in-place", "--", "-std=c11")
    assert code == 0, err
    report = json.loads(out)
    assert report["lines"]["after"] <= report["lines"]["before"]
    expected, _ = predicted(record, report["new_order"])
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[0], cc
        assert layout == expected, (cc, (tmp_path / "rec.h").read_text())


def test_build_time_mode_adds_the_barrier_too(tmp_path: Path) -> None:
    """reorder_unit (build-time mode, a preprocessed unit) predicts and verifies the same."""
    members = [("a", "unsigned int", 3), ("x", "int", None), ("c", "unsigned int", 5)]
    unit = tmp_path / "unit.c"
    unit.write_text(header(members).replace("#include <stddef.h>\n", "") +
                    program(members).replace('#include "rec.h"\n', "#include <stddef.h>\n"))
    expected, barriers = predicted(load_record(str(unit), ["-std=c11"], "rec"),
                                   ["a", "c", "x"])
    assert len(barriers) == 1
    out = reorder_unit(str(unit), ["-std=c11"], "rec", ["a", "c", "x"],
                       expected_size=int(expected["size"]))
    assert " : 0;" in out[str(unit)]
    unit.write_text(out[str(unit)])
    for cc in C_COMPILERS:
        _values, layout = split(build_and_run(tmp_path, "unit.c", cc, "-std=c11"))
        assert layout == expected, cc
