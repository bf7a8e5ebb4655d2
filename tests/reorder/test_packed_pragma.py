"""`#pragma pack`, `packed` and `aligned` on members: refused or placed exactly.

* A record under `#pragma pack` is refused like a `packed` record (exit 2, the record's
  file:line:col, nothing written), in source mode and in build-time mode (a preprocessed
  unit still carries the pragma), also where the layout hides the pack from the record's
  alignment (a record-level `aligned` attribute) or only bit-fields are packed.
* Bit-fields with `packed`/`aligned` attributes and members whose `aligned` value is not a
  literal are refused at the member.
* A member with its own `packed` (or `packed, aligned(N)`, what `--relax-align` writes) or
  literal `aligned(N)`/`_Alignas(N)` is modelled with the alignment it really has: after
  reordering, gcc 12 and clang-19 give exactly the planned layout and the same values.
"""

from __future__ import annotations

import subprocess
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
from reorder_helpers import C_COMPILERS, CXX_COMPILERS, build_and_run, snapshot, write

from cachefit.errors import UnsafeTransformation
from cachefit.pipeline.unit_transform import reorder_unit

pytestmark = pytest.mark.skipif(not C_COMPILERS, reason="no C compiler")

M = Member
PLAIN = [M("a", "char"), M("b", "int"), M("c", "char"), M("d", "double"), M("e", "short")]
BITS = [M("a", "char"), M("b", "unsigned", 4), M("c", "unsigned", 20), M("d", "char")]

# name: (members, text before the record, record attributes, text after, message, line)
REFUSED = {
    "pragma-pack-2": (PLAIN, "#pragma pack(push, 2)\n", "", "#pragma pack(pop)\n",
                      "is packed (#pragma pack: member b needs alignment 4 but the record "
                      "is aligned to 2)", 2),
    "pragma-pack-1-aligned-record": (
        PLAIN, "#pragma pack(1)\n", "__attribute__((aligned(8)))", "#pragma pack()\n",
        "is packed (#pragma pack: member b (alignment 4) is at offset 1)", 2),
    "pragma-pack-hidden": (
        [M("a", "long"), M("b", "char"), M("c", "unsigned", 1), M("d", "char")],
        "#pragma pack(push, 1)\n", "__attribute__((aligned(8)))", "#pragma pack(pop)\n",
        "is packed (#pragma pack: the record's aligned attribute hides it in the layout)", 2),
    "pragma-pack-bit-fields": (BITS, "#pragma pack(push, 1)\n", "", "#pragma pack(pop)\n",
                               "is packed (#pragma pack: member b needs alignment 4", 2),
    "packed-bit-field": (
        [M("a", "char"), M("b", "unsigned", 4, "__attribute__((packed))"), M("c", "int")],
        "", "", "", "bit-field b of rec has a packed or aligned attribute", 3),
    "aligned-not-literal": (
        [M("a", "char"), M("b", "int", None, "__attribute__((aligned(sizeof(long))))"),
         M("c", "char")], "", "", "", "the alignment of member b of rec is not a number", 3),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_source_mode(tmp_path: Path, cachefit, name: str) -> None:
    members, before, attrs, after, message, line = REFUSED[name]
    write(tmp_path, {"rec.h": header(members, before=before, after=after,
                                     record_attrs=attrs),
                     "main.c": program(members)})
    for cc in C_COMPILERS:              # the input is valid C
        build_and_run(tmp_path, "main.c", cc, "-std=c11")
    files = [tmp_path / "rec.h", tmp_path / "main.c"]
    snap = snapshot(files)
    order = ",".join(m.name for m in reversed(members) if m.name)
    code, out, err = cachefit("reorder", "rec", tmp_path / "main.c", "--order", order,
                              "--in-place", "--", "-std=c11")
    assert code == 2, err
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"cachefit: error: {tmp_path / 'rec.h'}:{line}:"), err
    assert message in err, err
    assert snapshot(files) == snap


def test_aligned_record_without_pack_is_reordered(tmp_path: Path, cachefit) -> None:
    """The control for "pragma-pack-hidden": the same record without the pragma."""
    members = REFUSED["pragma-pack-hidden"][0]
    write(tmp_path, {"rec.h": header(members, record_attrs="__attribute__((aligned(8)))"),
                     "main.c": program(members)})
    before = split(build_and_run(tmp_path, "main.c", "gcc", "-std=c11"))
    record = load(tmp_path / "rec.h", ["-std=c11"])
    order = storage_order(record, ["d", "c", "b", "a"])
    expected, _ = predicted(record, order)
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order",
                            ",".join(order), "--in-place", "--", "-std=c11")
    assert code == 0, err
    for cc in C_COMPILERS:
        values, layout = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        assert values == before[0] and layout == expected, cc


def test_aligned_alignas_not_literal_is_refused_in_cxx(tmp_path: Path, cachefit) -> None:
    members = [M("a", "char"), M("b", "alignas(double) int"), M("c", "char")]
    write(tmp_path, {"rec.h": header(members, cxx=True)})
    snap = snapshot([tmp_path / "rec.h"])
    code, _, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", "c,b,a",
                            "--in-place", "--", "-x", "c++", "-std=c++17")
    assert code == 2 and "the alignment of member b of rec is not a number" in err, err
    assert "rec.h:3:" in err and snapshot([tmp_path / "rec.h"]) == snap


def preprocess(tmp_path: Path, cc: str, members: list[Member], **kw: str) -> Path:
    write(tmp_path, {"rec.h": header(members, **kw), "main.c": program(members)})
    unit = tmp_path / f"main-{cc}.i"
    subprocess.run([cc, "-std=c11", "-E", "-o", str(unit), str(tmp_path / "main.c")],
                   check=True)
    return unit


@pytest.mark.parametrize("name", ["pragma-pack-2", "pragma-pack-1-aligned-record",
                                  "pragma-pack-hidden"])
def test_refused_in_build_time_mode(tmp_path: Path, name: str) -> None:
    """The preprocessed unit keeps the pragma; reorder_unit refuses at the record."""
    members, before, attrs, after, message, _ = REFUSED[name]
    names = [m.name for m in members if m.name]
    for cc in C_COMPILERS:
        unit = preprocess(tmp_path, cc, members, before=before, after=after,
                          record_attrs=attrs)
        text = unit.read_text()
        with pytest.raises(UnsafeTransformation) as exc:
            reorder_unit(str(unit), ["-std=c11"], "rec", names[:1] + names[:0:-1])
        assert message in exc.value.what, exc.value.what
        loc = exc.value.location
        assert loc is not None and loc.file == str(unit), loc
        assert text.splitlines()[loc.line - 1].startswith("struct"), loc
        assert unit.read_text() == text


MODELLED = {
    "packed-member": [M("a", "char"), M("b", "int", None, "__attribute__((packed))"),
                      M("c", "char"), M("d", "int"), M("e", "short"), M("f", "double")],
    "packed-aligned-member": [M("a", "char"),
                              M("b", "long", None, "__attribute__((packed, aligned(2)))"),
                              M("c", "char"), M("d", "int"), M("e", "char")],
    "aligned-member": [M("a", "char"), M("b", "int", None, "__attribute__((aligned(16)))"),
                       M("c", "char"), M("d", "short"), M("e", "long")],
}
ORDERS = [["c", "b", "a"], ["e", "a", "b"], ["a", "c", "e", "b"]]


def orders_for(names: list[str]) -> list[list[str]]:
    """Orders that put b after members of other sizes, then the rest in reverse."""
    out = []
    for head in ORDERS:
        head = [n for n in head if n in names]
        out.append(head + [n for n in reversed(names) if n not in head])
    return out


@pytest.mark.parametrize("cxx", [False, True], ids=["c", "cxx"])
@pytest.mark.parametrize("name", sorted(MODELLED))
def test_member_attributes_are_modelled(tmp_path: Path, cachefit, name: str,
                                        cxx: bool) -> None:
    members = MODELLED[name]
    compilers = CXX_COMPILERS if cxx else C_COMPILERS
    std = "-std=c++17" if cxx else "-std=c11"
    lang = ["-x", "c++", std] if cxx else [std]
    main = "main.cc" if cxx else "main.c"
    rec = tmp_path / "rec.h"
    write(tmp_path, {"rec.h": header(members, cxx), main: program(members, cxx)})
    text = rec.read_text()
    before = {cc: split(build_and_run(tmp_path, main, cc, std)) for cc in compilers}
    record = load(rec, lang)
    names = [f.name for f in record.fields]
    assert predicted(record, names)[0] == before[compilers[0]][1]
    for order in orders_for(names):
        rec.write_text(text)
        order = storage_order(record, order)
        expected, _ = predicted(record, order)
        code, _, err = cachefit("reorder", "rec", rec, "--order", ",".join(order),
                                "--in-place", "--", *lang)
        assert code == 0, err
        for cc in compilers:
            values, layout = split(build_and_run(tmp_path, main, cc, std))
            assert values == before[cc][0], (cc, rec.read_text())
            assert layout == expected, (cc, order, rec.read_text())


def test_packed_member_in_build_time_mode(tmp_path: Path) -> None:
    members = MODELLED["packed-member"]
    for cc in C_COMPILERS:
        unit = preprocess(tmp_path, cc, members)
        before = split(build_and_run(tmp_path, "main.c", cc, "-std=c11"))
        record = load(unit, ["-std=c11"])
        order = storage_order(record, ["a", "c", "b", "f", "e", "d"])
        values, layout, expected = reorder_unit_and_run(tmp_path, cc, unit, record, order)
        assert expected["b byte"] == "2"          # packed: right after c, unaligned
        assert values == before[0] and layout == expected, cc
