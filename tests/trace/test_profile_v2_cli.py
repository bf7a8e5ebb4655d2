"""`cachefit profile show|merge` on version 2 profiles, and bad version 2 input through the
command line: one line `cachefit: error: ...`, exit 2, never a traceback (issue 26)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cachefit.model.profile import dumps, load
from cachefit.report.profile_show import render
from cli_errors import one_line_error

GOLDEN = Path(__file__).parent / "golden"
CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CACHEFIT, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120)



def test_show_json_prints_the_readable_form_which_loads(tmp_path: Path) -> None:
    proc = run(["profile", "show", str(GOLDEN / "profile_v2.json"), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (GOLDEN / "profile_v2_readable.json").read_text()
    data = json.loads(proc.stdout)
    assert data["types"]["tcb"]["sequences"][1]["hits"] == [4000, 2, 1998]
    (tmp_path / "r.json").write_text(proc.stdout)
    assert dumps(load(tmp_path / "r.json")) == dumps(load(GOLDEN / "profile_v2.json"))
    # --type and --top narrow it; still a profile
    proc = run(["profile", "show", str(GOLDEN / "profile_v2.json"), "--json", "--type", "tcb",
                "--top", "1"], tmp_path)
    data = json.loads(proc.stdout)
    assert list(data["types"]) == ["tcb"] and len(data["types"]["tcb"]["sequences"]) == 1
    # a version 1 profile is shown as version 2
    proc = run(["profile", "show", str(GOLDEN / "profile_v1.json"), "--json"], tmp_path)
    assert json.loads(proc.stdout)["version"] == 2


def test_show_text_names_kinds_and_summaries() -> None:
    text = render(load(GOLDEN / "profile_v2.json"), types=["tcb"], title="p")
    lines = text.splitlines()
    assert lines[0] == ("p: 11 invocations of ipc, touch (ipc 7, touch 4), backend "
                        "compile-time, cache line 64 bytes")
    assert "  kinds: ipc 7, touch 2" in lines
    i = lines.index("  #2  count 2 (22.2%), ipc, summary: 3 distinct accesses, 6000 in all, "
                    "1 object")
    assert lines[i + 1].split()[:3] == ["0", "r", "partner"] and lines[i + 1].endswith("x4000")


def test_merge_writes_version_2(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    proc = run(["profile", "merge", str(GOLDEN / "profile_v2.json"),
                str(GOLDEN / "profile_v2_readable.json"), "-o", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    m = load(out)
    assert m.entry_invocations == {"ipc": 14, "touch": 8}
    assert [s.count for s in m.types["tcb"].sequences] == [10, 4, 2, 2]
    assert m.types["tcb"].sequences[1].hits == (8000, 4, 3996)


def _broken(tmp_path: Path, what: str) -> Path:
    data = json.loads((GOLDEN / "profile_v2.json").read_text())
    blob = data["types"]["tcb"]["sequences"]
    if what == "truncated zstd":
        data["types"]["tcb"]["sequences"] = base64.b64encode(
            base64.b64decode(blob)[:-9]).decode()
    elif what == "version":
        data["version"] = 7
    elif what == "count":
        data["types"]["tcb"]["dropped"]["runaway"] = "two"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    if what == "truncated gzip":
        import gzip
        path.write_bytes(gzip.compress((GOLDEN / "profile_v2.json").read_bytes())[:-20])
    return path


@pytest.mark.parametrize("what, message", [
    ("truncated zstd", "corrupt or truncated zstd data"),
    ("truncated gzip", "corrupt or truncated gzip data"),
    ("version", "profile format version 7 is not supported"),
    ("count", "Expected `int`, got `str` - at `$.types[...].dropped.runaway`"),
])
@pytest.mark.parametrize("command", ["show", "report"])
def test_bad_version_2_input_is_one_line(tmp_path: Path, what: str, message: str,
                                         command: str) -> None:
    bad = _broken(tmp_path, what)
    args = ["profile", "show", str(bad)] if command == "show" else ["report", str(bad)]
    line = one_line_error(run(args, tmp_path))
    assert message in line, line
