"""`cachefit report` in the terminal on the hand-written two-role profile of conftest.py:
the figures a wrong computation would change (per role, per sequence weight, per layout)."""

from __future__ import annotations

import json
import re

import pytest
from report_helpers import ObjCase

from cachefit.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def figures(out: str, label: str) -> list[str]:
    m = re.search(rf"^  {re.escape(label)}\s+(.*)$", out, re.M)
    assert m, f"no '{label}' row in:\n{out}"
    return m.group(1).split()


def test_plan_order_before_4_after_3_lines(obj_case: ObjCase,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--type", "obj", "--binary",
                       str(obj_case.binary), "--layouts", str(obj_case.plan),
                       "--object-align", "64")
    assert code == 0
    assert f"layout before: compiler: DWARF of {obj_case.binary}" in out
    assert "layout after:  predicted" in out
    assert f"the order in the layout plan {obj_case.plan}" in out
    assert "objects start on a 64-byte line boundary" in out
    # Per invocation: (4*5 + 1*5)/10 before, (3*5 + 1*5)/10 after; bound 1.5.
    assert figures(out, "lines per invocation") == ["2.50", "2.00", "1.50"]
    assert figures(out, "dirty lines per inv.") == ["1.50", "1.50", "1.00"]
    assert figures(out, "size (bytes)") == ["256", "256"]
    assert "before    after*" in out and "* predicted offsets" in out
    assert re.search(r"5 accesses, 2 objects: lines 4 -> 3, dirty 3 -> 3", out)
    assert re.search(r"1 access, 1 object: lines 1 -> 1, dirty 0 -> 0", out)
    # Field names and where each access lands before and after.
    assert re.search(r"1 w  c\s+@128\s+line 2\s+-> @72\s+line 1", out)
    assert re.search(r"0 r  d\s+@192\s+line 3\s+-> @80\s+line 1", out)
    assert "other" not in out


def test_optimized_binary_gives_compiler_offsets(obj_case: ObjCase,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--type", "obj", "--binary",
                       str(obj_case.binary), "--layouts", str(obj_case.plan),
                       "--object-align", "64", "--optimized-binary",
                       str(obj_case.planned_binary))
    assert code == 0
    assert f"layout after:  compiler: DWARF of {obj_case.planned_binary}" in out
    assert figures(out, "lines per invocation") == ["2.50", "2.00", "1.50"]
    assert "predicted" not in out and "warning" not in out
    # Without a plan, the binary's order is "after" (the optimizer is not consulted).
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--type", "obj", "--binary",
                       str(obj_case.binary), "--object-align", "64", "--optimized-binary",
                       str(obj_case.planned_binary))
    assert code == 0
    assert f"new order:     the order compiled into {obj_case.planned_binary}" in out
    assert figures(out, "lines per invocation") == ["2.50", "2.00", "1.50"]


def test_optimizer_order_reaches_the_bound(obj_case: ObjCase,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # The layout comes from the profile's `programs` (DWARF of obj.o), the order from the
    # optimizer: a, b, c, d share line 0, which meets the per-footprint bound.
    code, out, _ = run(capsys, "report", str(obj_case.profile_with_program), "--type", "obj",
                       "--object-align", "64", "--time-limit", "1")
    assert code == 0
    assert f"DWARF of {obj_case.binary}" in out
    assert "the order the optimizer computes" in out and "proven optimal" in out
    assert figures(out, "lines per invocation") == ["2.50", "1.50", "1.50"]
    assert figures(out, "dirty lines per inv.") == ["1.50", "1.00", "1.00"]
    assert re.search(r"lines 4 -> 2, dirty 3 -> 2", out)


def test_default_object_alignment_averages_start_offsets(
        obj_case: ObjCase, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--type", "obj", "--binary",
                       str(obj_case.binary), "--layouts", str(obj_case.plan))
    assert code == 0
    assert "objects aligned to 8 bytes: figures average 8 start offsets" in out
    # Starts 0, 8, ..., 56 in the line. With the plan (a@0 b@8 c@72 d@80) object 0's a..b
    # (16 bytes) straddles a line only at start 56: 9 lines over 8 starts; object 1's a and
    # c are always in two lines: 16; sequence 2: 8. (5*(9+16) + 5*8) / (10*8) = 2.0625.
    # Before, every field is 8 bytes at a multiple of 64: 2.5 at every start.
    assert figures(out, "lines per invocation")[:2] == ["2.50", "2.06"]


def test_without_binary_the_layout_is_predicted(obj_case: ObjCase,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--layouts",
                       str(obj_case.plan), "--object-align", "64", "--time-limit", "0.5")
    assert code == 0
    assert "layout before: predicted: the profile's field spans" in out
    assert "before*" in out
    assert figures(out, "lines per invocation")[:2] == ["2.50", "2.00"]
    # `other` is not in the plan: the optimizer orders it.
    other = out[out.index("type other"):]
    assert "the order the optimizer computes" in other


def test_unknown_type_exits_2_listing_types(obj_case: ObjCase,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "report", str(obj_case.profile), "--type", "nope")
    assert code == 2 and out == ""
    assert err.strip() == (f"cachefit: error: {obj_case.profile}: the profile has no type "
                           "nope; traced types: obj, other")


def test_plan_missing_a_field_exits_2(obj_case: ObjCase,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(obj_case.plan.read_text())
    plan["records"]["obj"]["order"].remove("pad4")
    obj_case.plan.write_text(json.dumps(plan))
    code, _, err = run(capsys, "report", str(obj_case.profile), "--type", "obj",
                       "--binary", str(obj_case.binary), "--layouts", str(obj_case.plan))
    assert code == 2
    assert "the layout plan's order for obj lacks field pad4" in err


def test_not_a_plan_exits_2(obj_case: ObjCase, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "report", str(obj_case.profile), "--layouts",
                       str(obj_case.profile))
    assert code == 2
    assert err.startswith(f"cachefit: error: {obj_case.profile}: not a layout plan")


def test_type_without_layout_is_skipped_not_fatal(obj_case: ObjCase,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # obj.o does not define `other`: reporting every type lists it as not analysed; naming
    # it with --type is an error.
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--binary",
                       str(obj_case.binary), "--layouts", str(obj_case.plan))
    assert code == 0
    assert "type obj: 256 bytes" in out
    assert re.search(r"^type other: not analysed: .*other", out, re.M)
    code, out, err = run(capsys, "report", str(obj_case.profile), "--type", "other",
                         "--binary", str(obj_case.binary))
    assert code == 2 and out == "" and "other" in err


def test_binary_with_another_layout_is_flagged(obj_case: ObjCase,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # --binary names the object built with the plan's order: accesses are moved to it by
    # field name (so "before" is already 2.00), and the report says the layout is not the
    # traced one.
    code, out, _ = run(capsys, "report", str(obj_case.profile), "--type", "obj", "--binary",
                       str(obj_case.planned_binary), "--layouts", str(obj_case.plan),
                       "--object-align", "64")
    assert code == 0
    assert figures(out, "lines per invocation") == ["2.00", "2.00", "1.50"]
    assert (f"warning: the layout from DWARF of {obj_case.planned_binary} is not the traced "
            "one (b is at 8, traced at 64)") in out
