"""`cachefit report` on a real profile: examples/ipc built in profile mode and traced (with
tests/trace's helpers), the tcb layout read from the traced program's DWARF."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_helpers import TRACE_TESTS  # noqa: F401  (puts trace_helpers on sys.path)
from trace_helpers import build_pingpong, needs_clang, needs_ipc, trace_pingpong

from cachefit.cli.main import main
from cachefit.frontend.dwarf_records import read_record

pytestmark = [needs_clang, needs_ipc]


def test_ipc_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = build_pingpong(tmp_path)
    trace_pingpong(tmp_path, prog)
    html = tmp_path / "ipc.html"
    assert main(["report", str(tmp_path / "ipc.json"), "--top", "1", "--time-limit", "1",
                 "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"layout before: compiler: DWARF of {prog}" in out
    m = re.search(r"lines per invocation\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out)
    assert m, out
    before, after, bound = map(float, m.groups())
    assert bound <= after < before
    # The call path (heaviest): both TCBs in lines 0 and 1 of the hand-tuned layout, plus
    # the receiver's pdir_cache alone in line 4.
    assert re.search(r"#1  count \d+ \(\d+\.\d%\), \d+ accesses, 2 objects: lines 5 -> ", out)
    assert re.search(r"1 r  pdir_cache\s+@256\s+line 4", out)
    assert "... 7 more sequences" in out
    text = html.read_text()
    tcb = read_record(str(prog), "tcb")
    for f in tcb.fields:
        assert text.count(f'<td class="name">{f.name}</td>') == 2, f.name   # old and new
    assert text.count("<svg ") == 2
