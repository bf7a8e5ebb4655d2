"""What every refused command must print: exit code 2 and one `cachefit: error: ...` line,
never a traceback. Shared by the tests that check error messages."""

from __future__ import annotations

import subprocess


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The error line of a command that must fail with exit 2 and one error line."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cachefit: error: "), proc.stderr
    return lines[0]
