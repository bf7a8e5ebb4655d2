"""`cachefit trace --qemu` from the command line: an uninstrumented user-mode program traced
with the settings of the cachefit.toml in the working directory, the CLI's limit options, and
its one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cachefit.model import profile as profile_format

CACHEFIT = Path(sys.executable).with_name("cachefit")
OP_TWO = [[0, 0, 8, "w"], [0, 8, 4, "r"], [1, 8, 4, "w"], [1, 56, 8, "w"]]

TOML = """\
[trace]
types = ["obj"]
entry = "{entry}"

[trace.qemu]
overhead = {overhead}
{extra}
"""


def cli(tmp_path: Path, *args: str, entry: str = "op", overhead: bool = False,
        extra: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "cachefit.toml").write_text(
        TOML.format(entry=entry, overhead=str(overhead).lower(), extra=extra))
    env = {k: v for k, v in os.environ.items() if k != "CACHEFIT_CONFIG"}
    return subprocess.run([str(CACHEFIT), "trace", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_traces_a_user_mode_program_with_the_project_phase(progs, tmp_path):
    out = tmp_path / "p.json"
    proc = cli(tmp_path, "--qemu", "-o", str(out), "--", str(progs["static"]), "3",
               overhead=True, extra='phase_start = "phase_begin"\nphase_end = "phase_done"')
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out} (qemu backend)" in proc.stderr
    p = profile_format.load(out).to_json()   # version 2, sequences spelled out
    profile_format.load(out)        # the format the other stages read
    assert p["backend"] == "qemu" and p["qemu"]["mode"] == "user"
    # scenario 3: five calls of op, two inside the phase the project file names
    assert p["invocations"] == 2
    assert [(s["count"], s["accesses"]) for s in p["types"]["obj"]["sequences"]] == \
        [(2, OP_TWO)]
    assert p["qemu"]["phase_reached"] == "ended"
    assert p["overhead"]["plain_seconds"] > 0 and p["qemu"]["slowdown"] is not None


def test_cli_limit_option_overrides_the_project_file(progs, tmp_path):
    out = tmp_path / "r.json"
    proc = cli(tmp_path, "--qemu", "--max-accesses", "5", "-o", str(out), "--",
               str(progs["static"]), "5", entry="many", extra="max_accesses = 4096")
    assert proc.returncode == 0, proc.stderr
    p = profile_format.load(out).to_json()   # version 2, sequences spelled out
    # many(&x, 10) is cut off at 5 accesses, many(&y, 2) is kept
    assert p["types"]["obj"]["dropped"]["runaway"] == 1
    assert [(s["count"], s["accesses"]) for s in p["types"]["obj"]["sequences"]] == \
        [(1, [[0, 12, 4, "w"], [0, 12, 4, "w"]])]


def test_cli_errors_are_one_line_with_exit_2(progs, tmp_path):
    proc = cli(tmp_path, "--qemu", "-o", str(tmp_path / "x.json"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("cachefit: error: no command to trace; ")
    proc = cli(tmp_path, "--qemu", "-o", str(tmp_path / "x.json"), "--",
               str(tmp_path / "missing-program"))
    assert proc.returncode == 2 and proc.stderr.startswith("cachefit: error: ")
    assert "missing-program" in proc.stderr.splitlines()[0]
    assert not (tmp_path / "x.json").exists()
