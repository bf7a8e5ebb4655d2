"""The report's sharing section (issue 30), on a hand-made two-thread profile.

struct shared { int mode; long count0; char name[12]; long count1; short flags; }
traced: mode@0 count0@8 name@16 count1@32 flags@40, 48 bytes, objects at a line start.
Sharing (granule 1, 2 threads, one shared object): thread 0 reads mode, writes count0;
thread 1 reads mode, writes count1. Handoffs: 10 x (written count0 / touched mode, count1)
and 10 x (written count1 / touched mode, count0). Sequences: 10 x (read mode, write count0)
and 10 x (read mode, write count1): 20 counted invocations.

Before: every field on line 0; each handoff moves line 0: 20 transfers, 1.00 per invocation;
pairs (count0, count1), (count0, mode), (count1, count0), (count1, mode) 10 each (0.50).
Plan mode, name, flags, count0, count1 with 40 bytes before count0 and 56 before count1:
mode@0 name@4 flags@16 count0@64 count1@128, 136 bytes: no line holds a written and a
touched field: 0 transfers. Without the padding before count0: count0@24 count1@88
(lines 0 and 1): the first handoff moves line 0 (10), the second none: saves 0.50 per
invocation (0.0125 per byte). Without the padding before count1: count0@64 count1@72 (both
line 1): both handoffs move line 1 (20): saves 1.00 (1/56 = 0.0179 per byte).
Lines per invocation: 1.00 before, 2.00 after (each sequence touches mode and a counter).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_records import read_record
from cachefit.layout import optimize_layout
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Handoff,
    Profile,
    SharedObject,
    TypeProfile,
    TypeSharing,
)
from cachefit.report.html_report import render_html
from cachefit.report.record_lookup import FoundRecord
from cachefit.report.sharing_report import PaddingValue, SharingCause, ThreadUse
from cachefit.report.terminal_report import render_text
from cachefit.report.type_report import AfterChoice, build_type_report

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None,
                                reason="clang-19 not installed")

SHARED_C = """\
struct shared {
    int mode;
    long count0;
    char name[12];
    long count1;
    short flags;
};
struct shared the_shared;
"""
PADDED_C = """\
struct shared {
    int mode;
    char name[12];
    short flags;
    char __cachefit_pad_count0[40];
    long count0;
    char __cachefit_pad_count1[56];
    long count1;
};
struct shared the_shared;
"""
ORDER = ("mode", "name", "flags", "count0", "count1")
PADDING = {"count0": 40, "count1": 56}


def _record(tmp_path: Path, name: str, text: str) -> FoundRecord:
    src = tmp_path / f"{name}.c"
    src.write_text(text)
    obj = tmp_path / f"{name}.o"
    subprocess.run(["clang-19", "-g", "-c", str(src), "-o", str(obj)], check=True)
    return FoundRecord(read_record(str(obj), "shared"), f"DWARF of {obj}", True)


def _profile(sharing: bool = True) -> TypeProfile:
    spans = [FieldSpan("mode", 0, 4), FieldSpan("count0", 8, 8), FieldSpan("name", 16, 12),
             FieldSpan("count1", 32, 8), FieldSpan("flags", 40, 2)]
    seqs = [AccessSequence(10, (Access(0, 0, 4, "r"), Access(0, 8, 8, "w")), "work"),
            AccessSequence(10, (Access(0, 0, 4, "r"), Access(0, 32, 8, "w")), "work")]
    share = TypeSharing(
        granule=1, threads=2, private_objects=3,
        shared=[SharedObject(1, reads=((0, 0, 4), (1, 0, 4)),
                             writes=((0, 8, 8), (1, 32, 8)))],
        handoffs=[Handoff(10, ((8, 8),), ((0, 4), (32, 8))),
                  Handoff(10, ((32, 8),), ((0, 4), (8, 8)))])
    return TypeProfile("shared", 48, spans, seqs, alignment={0: 20},
                       sharing=share if sharing else None)


def test_plan_with_padding(tmp_path: Path) -> None:
    found = _record(tmp_path, "shared", SHARED_C)
    r = build_type_report(_profile(), found, cache_line=64, object_align=None,
                          choice=AfterChoice(ORDER, "plan.json", 136, plan_padding=PADDING))
    assert r.after.offsets() == {"mode": 0, "name": 4, "flags": 16, "count0": 64,
                                 "count1": 128}
    assert r.after.size == 136 and not r.warnings
    assert (r.lines_before, r.lines_after) == (1.0, 2.0)
    s = r.sharing
    assert s is not None
    assert (s.threads, s.granule, s.shared_objects, s.private_objects, s.lost, s.handoffs) == \
        (2, 1, 1, 3, 0, 20)
    assert (s.transfers_before, s.transfers_after) == (1.0, 0.0)
    assert s.thread_use == (ThreadUse(0, 1, ("mode",), ("count0",)),
                            ThreadUse(1, 1, ("mode",), ("count1",)))
    assert s.causes == (SharingCause("count0", "count1", 0.5, 0.0, (0,), (1,)),
                        SharingCause("count0", "mode", 0.5, 0.0, (0,), (0, 1)),
                        SharingCause("count1", "count0", 0.5, 0.0, (1,), (0,)),
                        SharingCause("count1", "mode", 0.5, 0.0, (1,), (0, 1)))
    assert s.padding == (PaddingValue("count0", 40, 0.5), PaddingValue("count1", 56, 1.0))
    assert (s.padding_bytes, s.size_before, s.size_after) == (96, 48, 136)

    text = render_text(Profile(types={"shared": r.profile}, invocations=20), [r],
                       title="p", top=1)
    section = text[text.index("  threads:"):text.index("  heaviest sequences")]
    assert section.splitlines() == [
        "  threads: 2 (numbered in the order they began); 1 object shared, 3 private; "
        "granule 1 byte",
        "    thread 0: 1 object, read mode; wrote count0",
        "    thread 1: 1 object, read mode; wrote count1",
        "  lines changing hands per inv.       before     after",
        "  in all                                1.00      0.00   (20 handoffs)",
        "    count0 / count1                     0.50      0.00   written by 0, touched by 1",
        "    count0 / mode                       0.50      0.00   written by 0, touched by "
        "0, 1",
        "    count1 / count0                     0.50      0.00   written by 1, touched by 0",
        "    count1 / mode                       0.50      0.00   written by 1, touched by "
        "0, 1",
        "    (written field / touched field on a line that changes hands; a line counts for "
        "every pair it holds)",
        "  padding: 96 bytes (size 48 -> 136)",
        "    40 bytes before count0: saves 0.50 lines changing hands per invocation "
        "(0.0125 per byte)",
        "    56 bytes before count1: saves 1.00 lines changing hands per invocation "
        "(0.0179 per byte)",
        ""]
    html = render_html(Profile(types={"shared": r.profile}, invocations=20), [r], title="p")
    assert "<h3>Threads</h3>" in html
    assert "Lines changing hands per invocation 1.00 → 0.00 (20 handoffs)." in html
    assert ('<tr><td class="name">count1</td><td>56</td><td>1.00</td><td>0.0179</td></tr>'
            in html)
    assert ('<tr><td class="name">count0</td><td class="name">mode</td><td>0.50</td>'
            '<td>0.00</td><td class="name">0</td><td class="name">0, 1</td></tr>' in html)


def test_compiled_padding_members_give_the_plan_figures(tmp_path: Path) -> None:
    found = _record(tmp_path, "shared", SHARED_C)
    after = _record(tmp_path, "padded", PADDED_C)
    planned = build_type_report(_profile(), found, cache_line=64, object_align=None,
                                choice=AfterChoice(ORDER, "plan.json", 136,
                                                   plan_padding=PADDING))
    compiled = build_type_report(_profile(), found, cache_line=64, object_align=None,
                                 choice=AfterChoice(ORDER, "plan.json", 136,
                                                    plan_padding=PADDING),
                                 after_record=after)
    assert not compiled.warnings        # the padding members are the plan's
    assert compiled.sharing == planned.sharing
    assert compiled.after.offsets() == planned.after.offsets()


def test_optimizer_figures_are_the_layout_stage_figures(tmp_path: Path) -> None:
    found = _record(tmp_path, "shared", SHARED_C)
    tp = _profile()
    r = build_type_report(tp, found, cache_line=64, object_align=None,
                          choice=AfterChoice(time_limit=1.0))
    res = optimize_layout(found.record, _profile(), cache_line=64, time_limit=1.0)
    s = r.sharing
    assert s is not None and res.transfers_before is not None
    assert (s.transfers_before, s.transfers_after) == (res.transfers_before,
                                                       res.transfers_after)
    assert {p.field: p.size for p in s.padding} == res.padding
    assert {p.field: p.saved for p in s.padding} == res.padding_gains
    assert s.size_after == res.size_after


def test_no_sharing_data_no_section(tmp_path: Path) -> None:
    found = _record(tmp_path, "shared", SHARED_C)
    with_plan = AfterChoice(ORDER, "plan.json", None)
    plain = build_type_report(_profile(sharing=False), found, cache_line=64,
                              object_align=None, choice=with_plan)
    assert plain.sharing is None
    text = render_text(Profile(types={"shared": plain.profile}, invocations=20), [plain],
                       title="p", top=1)
    html = render_html(Profile(types={"shared": plain.profile}, invocations=20), [plain],
                       title="p")
    assert "threads" not in text and "Threads" not in html
    # sharing data changes nothing else in the report
    shared = build_type_report(_profile(), found, cache_line=64, object_align=None,
                               choice=with_plan)
    assert replace(shared, sharing=None, profile=plain.profile) == plain


def test_cachefit_report_reads_the_plan_padding(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from cachefit.cli.main import main
    from cachefit.model.profile import save
    found = _record(tmp_path, "shared", SHARED_C)
    save(Profile(types={"shared": _profile()}, invocations=20,
                 entry_invocations={"work": 20}), tmp_path / "p.json")
    (tmp_path / "plan.json").write_text(json.dumps({
        "format": "cachefit-layout-plan", "version": 1,
        "records": {"shared": {"order": list(ORDER), "expected_size": 136,
                               "padding": PADDING}}}))
    binary = found.origin.removeprefix("DWARF of ")
    assert main(["report", str(tmp_path / "p.json"), "--type", "shared", "--binary", binary,
                 "--layouts", str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    assert "  in all                                1.00      0.00   (20 handoffs)\n" in out
    assert "    56 bytes before count1: saves 1.00 lines changing hands per invocation " \
        "(0.0179 per byte)\n" in out
    assert "warning" not in out


def test_the_optimizer_run_by_the_report_takes_the_sharing_weight(tmp_path: Path) -> None:
    """`[layout] sharing_weight` reaches the report's own optimizer run: weight 0 is the
    lines objective alone (no padding, the transfers stay), the default separates."""
    found = _record(tmp_path, "shared", SHARED_C)
    off = build_type_report(_profile(), found, cache_line=64, object_align=None,
                            choice=AfterChoice(time_limit=1.0), sharing_weight=0.0)
    on = build_type_report(_profile(), found, cache_line=64, object_align=None,
                           choice=AfterChoice(time_limit=1.0))
    res = optimize_layout(found.record, _profile(), cache_line=64, time_limit=1.0,
                          sharing_weight=0.0)
    assert off.sharing is not None and on.sharing is not None
    assert off.sharing.padding == () and res.padding == {}
    assert off.sharing.transfers_after == off.sharing.transfers_before > 0
    assert on.sharing.padding and on.sharing.transfers_after < on.sharing.transfers_before
