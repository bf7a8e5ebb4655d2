"""`cachefit report` on a version 2 profile whose type is touched by two kinds of operation
(issue 26): the totals are those of the version 1 profile (the kinds weigh their counts),
and a table gives lines per invocation of each kind before, after and the lower bound.

The profile is report_helpers' hand-written one with its sequences given kinds: sequence 1
(5 invocations of `send`: 4 lines before, 3 with the plan; per-footprint bound 1 + 1) and
sequence 2 (5 invocations of `poll`: 1 line, bound 1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_helpers import ObjCase

from cachefit.cli.main import main
from cachefit.model.profile import load, save


def _v2(obj_case: ObjCase, weights: str = "") -> Path:
    prof = load(obj_case.profile)
    tp = prof.types["obj"]
    for s in tp.sequences:
        s.entry = "send" if len(s.accesses) > 1 else "poll"
    prof.types["other"].sequences[0].entry = "poll"
    prof.entry_invocations = {"send": 5, "poll": 5}
    out = obj_case.directory / "kinds.json"
    save(prof, out)
    if weights:
        (obj_case.directory / "cachefit.toml").write_text(f"[layout]\nentry_weights = {weights}\n")
    return out


def _row(out: str, label: str) -> list[str]:
    m = re.search(rf"^  {re.escape(label)}\s+(.*)$", out, re.M)
    assert m, f"no '{label}' row in:\n{out}"
    return m.group(1).split()


def test_per_kind_table(obj_case: ObjCase, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(obj_case.directory)
    assert main(["report", str(_v2(obj_case)), "--type", "obj", "--binary",
                 str(obj_case.binary), "--layouts", str(obj_case.plan),
                 "--object-align", "64", "--top", "2"]) == 0
    out = capsys.readouterr().out
    # The totals of the version 1 profile (tests/report/test_report_terminal.py).
    assert _row(out, "lines per invocation") == ["2.50", "2.00", "1.50"]
    assert _row(out, "dirty lines per inv.") == ["1.50", "1.50", "1.00"]
    lines = out.splitlines()
    head = lines.index("  lines per invocation of      count    before    after*  lower bound")
    assert lines[head + 1].split() == ["poll", "5", "1.00", "1.00", "1.00"]
    assert lines[head + 2].split() == ["send", "5", "4.00", "3.00", "2.00"]
    assert re.search(r"#\d  count 5 \(50.0%\), send, 5 accesses, 2 objects: lines 4 -> 3", out)
    html = obj_case.directory / "r.html"
    assert main(["report", str(_v2(obj_case)), "--type", "obj", "--binary",
                 str(obj_case.binary), "--layouts", str(obj_case.plan), "--object-align", "64",
                 "--html", str(html)]) == 0
    text = html.read_text()
    assert "<h3>Per kind of operation</h3>" in text
    assert ('<td class="name">send</td><td>5</td><td>4.00</td><td>3.00*</td><td>2.00</td>'
            in text)


def test_entry_weights_weigh_the_totals(obj_case: ObjCase, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """[layout] entry_weights = { send = 3, poll = 1 }: the totals are (3 * 4 + 1) / 4
    before and (3 * 3 + 1) / 4 with the plan; the per-kind rows do not change."""
    monkeypatch.chdir(obj_case.directory)
    prof = _v2(obj_case, "{ send = 3, poll = 1 }")
    assert main(["report", str(prof), "--type", "obj", "--binary", str(obj_case.binary),
                 "--layouts", str(obj_case.plan), "--object-align", "64"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "lines per invocation")[:2] == ["3.25", "2.50"]
    assert _row(out, "send") == ["5", "4.00", "3.00", "2.00"]


def test_single_kind_report_is_as_before(obj_case: ObjCase,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    prof = load(obj_case.profile)
    for s in prof.types["obj"].sequences:
        s.entry = "work"
    save(prof, obj_case.directory / "one.json")
    args = ["--type", "obj", "--binary", str(obj_case.binary), "--layouts",
            str(obj_case.plan), "--object-align", "64"]
    assert main(["report", str(obj_case.profile), *args]) == 0
    v1 = capsys.readouterr().out
    assert main(["report", str(obj_case.directory / "one.json"), *args]) == 0
    v2 = capsys.readouterr().out
    assert v2.replace(str(obj_case.directory / "one.json"), "P") == \
        v1.replace(str(obj_case.profile), "P")
