"""variant_bench: builds, checks and measures examples/ipc pingpong variants (tiny counts)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from cachefit.errors import UserError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "ipc" / "demo"))
from variant_bench import (  # noqa: E402
    JSON_KEYS,
    PINGPONG_DIR,
    Row,
    Variant,
    VariantMismatch,
    check_agreement,
    format_table,
    measure_variants,
    parse_valgrind_totals,
)

needs_tools = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("valgrind") is None,
    reason="needs g++ and valgrind (make deps installs them)")

FLAT = Variant("hand-tuned flat original", [])
MIXIN = Variant("virtual hierarchy", ["-DTCB_VARIANT_MIXIN"])
TINY = {"reps": 2, "iterations": 20, "inner_reps": 2, "valgrind_rounds": 8}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Row], Path]:
    out = tmp_path_factory.mktemp("variants")
    return measure_variants([FLAT, MIXIN], out, **TINY), out


@needs_tools
def test_two_variants_give_two_rows_in_table_and_json(measured: tuple[list[Row], Path]) -> None:
    rows, out = measured
    assert [r.variant for r in rows] == [FLAT.name, MIXIN.name]

    table = format_table(rows)
    lines = table.splitlines()
    assert lines[0].startswith("| variant | cycles/IPC | instructions/IPC | D1 misses/IPC")
    assert len(lines) == 2 + 2   # header, rule, one line per variant
    assert lines[2].startswith(f"| {FLAT.name} |")
    # the reference row's ratios are 1
    assert lines[2].endswith("| 1.00 | 1.00 | 1.00 | 1.00 |")

    data = json.loads((out / "summary.json").read_text())
    assert isinstance(data, list) and len(data) == 2
    for obj, row in zip(data, rows, strict=True):
        assert set(JSON_KEYS) <= set(obj)
        assert JSON_KEYS == ("variant", "cycles_per_ipc", "instructions_per_ipc",
                             "d1_misses_per_ipc", "ll_misses_per_ipc")
        assert obj["variant"] == row.variant
        for key in JSON_KEYS[1:]:
            assert isinstance(obj[key], float) and obj[key] > 0

    md = (out / "summary.md").read_text()
    assert table in md
    assert "--I1=32768,8,64 --D1=32768,8,64 --LL=262144,16,64" in md
    assert "valgrind --tool=callgrind" in md and "valgrind --tool=cachegrind" in md
    assert "-DTCB_VARIANT_MIXIN" in md


@needs_tools
def test_virtual_dispatch_costs_instructions_and_lines(measured: tuple[list[Row], Path]) -> None:
    flat, mixin = measured[0]
    assert flat.instructions_per_ipc is not None and mixin.instructions_per_ipc is not None
    assert mixin.instructions_per_ipc > flat.instructions_per_ipc
    # evict mode: every line ipc() touches misses; the mixin touches more lines (README)
    assert flat.d1_misses_per_ipc is not None and mixin.d1_misses_per_ipc is not None
    assert mixin.d1_misses_per_ipc > flat.d1_misses_per_ipc
    assert (flat.sizeof_tcb, mixin.sizeof_tcb) == (560, 600)
    assert flat.checksum == mixin.checksum
    # the whole-program figures are dominated by the eviction sweep (512 KiB / 64 B lines)
    assert flat.whole_run_d1_misses_per_ipc is not None
    assert flat.whole_run_d1_misses_per_ipc > 8192 > 100 * flat.d1_misses_per_ipc
    assert len(flat.cycles_samples) == TINY["reps"]


@needs_tools
def test_valgrind_counts_are_deterministic(measured: tuple[list[Row], Path],
                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    # The same run again, from a directory whose path is as long as the first one's
    # (variants0, variants1): the binary's path is on its stack, and a path of another
    # length moves the stack against the cache sets (D1 misses 9.94 vs 10.94 per IPC).
    again_dir = tmp_path_factory.mktemp("variants")
    assert len(str(again_dir)) == len(str(measured[1]))
    again = measure_variants([FLAT], again_dir, **TINY)[0]
    first = measured[0][0]
    assert (again.instructions_per_ipc, again.d1_misses_per_ipc, again.ll_misses_per_ipc) == (
        first.instructions_per_ipc, first.d1_misses_per_ipc, first.ll_misses_per_ipc)


@needs_tools
def test_variant_with_other_behaviour_is_rejected(tmp_path: Path) -> None:
    # a "transformation" that changes what get_mr returns: same layout, different messages
    text = (PINGPONG_DIR / "tcb_flat.h").read_text()
    old = "word_t get_mr(unsigned index) const { return mr[index]; }"
    assert old in text
    header = tmp_path / "tcb_broken.h"
    header.write_text(text.replace(old, "word_t get_mr(unsigned index) const "
                                        "{ return mr[index] ^ 1; }"))
    broken = Variant("broken reorder", [f'-DTCB_HEADER="{header}"'])
    out = tmp_path / "out"
    with pytest.raises(VariantMismatch, match="'broken reorder'") as err:
        measure_variants([FLAT, broken], out, **TINY, cachegrind=False)
    assert any("checksum=" in d for d in err.value.details)
    assert not (out / "summary.json").exists()


def test_check_agreement_names_only_the_differing_variant() -> None:
    ok = {"checksum": "0x1", "state_checksum": "0x2", "ipcs": "18"}
    check_agreement({"a": ok, "b": dict(ok)}, "-n 8")
    with pytest.raises(VariantMismatch) as err:
        check_agreement({"a": ok, "b": dict(ok), "c": ok | {"ipcs": "19"}}, "-n 8")
    assert "'c'" in err.value.what and "'b'" not in err.value.what


def test_bad_arguments_are_rejected_before_building(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="duplicate"):
        measure_variants([FLAT, FLAT], tmp_path)
    with pytest.raises(UserError, match="multiple of 8"):
        measure_variants([FLAT], tmp_path, valgrind_rounds=12)
    with pytest.raises(UserError, match="reference"):
        measure_variants([FLAT], tmp_path, reference="nope")
    assert not any(tmp_path.iterdir())


def test_format_table_ratios_and_missing_values() -> None:
    rows = [Row("mixin", 200.0, 300.0, 30.0, 30.0), Row("flat", 100.0, 100.0, 10.0, 10.0),
            Row("timing only", 150.0, None, None, None)]
    lines = format_table(rows, reference="flat").splitlines()
    assert lines[2] == ("| mixin | 200.0 | 300.0 | 30.00 | 30.00 | 2.00 | 3.00 | 3.00 | "
                        "3.00 |")
    assert lines[4] == "| timing only | 150.0 | n/a | n/a | n/a | 1.50 | n/a | n/a | n/a |"
    # default reference: the first row when "hand-tuned flat original" is absent
    assert format_table(rows).splitlines()[2].endswith("| 1.00 | 1.00 | 1.00 | 1.00 |")


def test_parse_valgrind_totals_uses_the_events_line(tmp_path: Path) -> None:
    cg = tmp_path / "cg.out"
    cg.write_text("desc: I1 cache: ...\ncmd: x\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n"
                  "fl=a.c\nfn=f\n1 1 0 0 0 0 0 0 0 0\nsummary: 10 1 1 4 2 2 3 1 0\n")
    assert parse_valgrind_totals(cg) == {"Ir": 10, "I1mr": 1, "ILmr": 1, "Dr": 4, "D1mr": 2,
                                         "DLmr": 2, "Dw": 3, "D1mw": 1, "DLmw": 0}
    clg = tmp_path / "clg.out"
    clg.write_text("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 9 9 9 9 9 9 9 9 9\n"
                   "totals: 5 2 1 0 1 1 0 1 0\n")
    assert parse_valgrind_totals(clg)["D1mw"] == 1


@needs_tools
def test_variant_with_its_own_compiler_and_environment(tmp_path: Path) -> None:
    # a compiler command that works only with the variable the variant sets
    script = tmp_path / "cxx"
    script.write_text('#!/bin/sh\n[ "$VB_MARK" = yes ] || { echo "no VB_MARK" >&2; exit 9; }\n'
                      'exec g++ "$@"\n')
    script.chmod(0o755)
    wrapped = Variant("wrapped", ["-DTCB_VARIANT_MIXIN"], compiler=[str(script)],
                      env={"VB_MARK": "yes"})
    rows = measure_variants([FLAT, wrapped], tmp_path / "ok", **TINY, cachegrind=False)
    assert rows[1].compiler == (str(script),) and rows[1].sizeof_tcb == 600
    data = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert data[1]["compiler"] == [str(script)]
    assert f"env VB_MARK=yes {script}" in (tmp_path / "ok" / "summary.md").read_text()
    unmarked = Variant("unmarked", [], compiler=[str(script)])
    with pytest.raises(UserError, match="'unmarked' does not compile"):
        measure_variants([FLAT, unmarked], tmp_path / "bad", **TINY, cachegrind=False)


def test_demo_acceptance_rule() -> None:
    from ipc_demo import ALPHABETICAL, CACHEFIT, VIRTUAL, acceptance

    def rows(ours: float, alpha: float, virt: float, flat: float) -> list[Row]:
        return [Row(VIRTUAL, 1, 1, virt, virt), Row(FLAT.name, 1, 1, flat, flat),
                Row(ALPHABETICAL, 1, 1, alpha, alpha), Row(CACHEFIT, 1, 1, ours, ours)]
    assert acceptance(rows(9.0, 19.0, 24.0, 10.0)) == []
    assert acceptance(rows(10.0, 19.0, 24.0, 10.0)) == []           # equal to hand-tuned: ok
    bad = acceptance(rows(19.0, 19.0, 24.0, 10.0))
    assert len(bad) == 2 and "not fewer than alphabetical" in bad[0] and "more than" in bad[1]
    assert acceptance([Row(CACHEFIT, 1, None, None, None)]) != []
