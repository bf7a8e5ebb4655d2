"""The report on a profile that recorded where the objects start (issue 26, item 5): the
figures are for the observed starts, the report says where they are and whether
line-aligned objects (aligned_alloc, alignas) would save lines, and how many."""

from __future__ import annotations

import sys
from pathlib import Path

LAYOUT_TESTS = Path(__file__).resolve().parents[1] / "layout"
if str(LAYOUT_TESTS) not in sys.path:
    sys.path.append(str(LAYOUT_TESTS))

from layout_synth import c_layout, profile_entry, typed  # noqa: E402

from cachefit.model import Record  # noqa: E402
from cachefit.model.profile import TypeProfile  # noqa: E402
from cachefit.report.record_lookup import FoundRecord  # noqa: E402
from cachefit.report.terminal_report import render_type_text  # noqa: E402
from cachefit.report.type_report import AfterChoice, build_type_report  # noqa: E402

NAMES = ["c0", "h0", "c1", "h1", "h2", "c2", "h3", "h4", "c3", "h5", "h6", "c4", "h7", "c5"]


def _case(names: list[str], alignment: dict[int, int] | None) -> tuple[Record, TypeProfile]:
    record = c_layout("state", [(n, "long", 8, 8) for n in names])
    accesses = [[0, f.offset, 8, "r"] for f in record.fields if f.name.startswith("h")]
    tp = typed(profile_entry(record, [(1000, accesses)]), "state")
    tp.alignment = alignment
    return record, tp


def _text(record: Record, tp: TypeProfile, choice: AfterChoice) -> str:
    r = build_type_report(tp, FoundRecord(record, "the test's record", True), cache_line=64,
                          object_align=None, choice=choice)
    return "\n".join(render_type_text(r, top=1))


def test_observed_start_where_the_new_order_needs_no_alignment() -> None:
    """zlib's case: at 48 mod 64 the new order puts the hot fields at [16, 80): one line,
    as line-aligned objects would get; aligning would save nothing."""
    record, tp = _case(NAMES, {48: 1000})
    r = build_type_report(tp, FoundRecord(record, "the test's record", True), cache_line=64,
                          object_align=None, choice=AfterChoice(time_limit=2.0))
    assert (r.lines_before, r.lines_after) == (3.0, 1.0)
    assert r.start_distribution == {48: 1}
    assert r.alignment is not None and r.alignment.observed == {48: 1000}
    assert r.alignment.aligned_after == 1.0 and r.alignment.saving == 0.0
    text = "\n".join(render_type_text(r, top=1))
    assert "  objects start at 48 mod 64 (traced: 1000 objects touched): figures are for " \
        "that start" in text
    assert "  64-byte aligned objects would save no lines per invocation: 1.00 after as " \
        "traced, at best 1.00 aligned (the lower bound for them); 2.00 before aligned" in text


def test_alignment_that_saves_lines_is_reported_with_the_figures() -> None:
    """Eight hot longs and nothing else: at 48 mod 64 every order touches 2 lines, on a
    line start 1."""
    names = [f"h{i}" for i in range(8)]
    record, tp = _case(names, {48: 600, 16: 200})
    text = _text(record, tp, AfterChoice(time_limit=2.0))
    assert "  objects start at offsets mod 64 (traced: 16 (25.0%), 48 (75.0%)): figures are " \
        "expected over them" in text
    assert "  64-byte aligned objects (aligned_alloc(64, ...), alignas(64)) would save 1.00 " \
        "lines per invocation: 2.00 before, 2.00 after as traced; 1.00 before, 1.00 after " \
        "aligned (the optimizer's layout for line-aligned objects)" in text
    plan = _text(record, tp, AfterChoice(plan_order=tuple(reversed(names)), plan_path="p"))
    assert "would save 1.00 lines per invocation: 2.00 before, 2.00 after as traced; " \
        "1.00 before, 1.00 after aligned (the plan's layout)" in plan


def test_no_alignment_or_all_at_a_line_start_says_what_it_said() -> None:
    record, tp = _case(NAMES, None)
    text = _text(record, tp, AfterChoice(time_limit=1.0))
    assert "  objects aligned to 8 bytes: figures average 8 start offsets in a 64-byte line" \
        in text
    assert "traced" not in text
    record, tp = _case(NAMES, {0: 5})
    text = _text(record, tp, AfterChoice(time_limit=1.0))
    assert "  objects start on a 64-byte line boundary" in text
