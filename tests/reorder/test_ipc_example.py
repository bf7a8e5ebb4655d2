"""The bundled example: tcb in alphabetical order compiles and pingpong's checksums agree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ipc"
pytestmark = pytest.mark.skipif(not (EXAMPLE / "tcb_flat.h").is_file() or
                                shutil.which("g++") is None,
                                reason="examples/ipc or g++ not available")
KEYS = ("checksum", "state_checksum", "ipcs")


def _run(exe: Path) -> dict[str, str]:
    out = subprocess.run([str(exe), "-n", "200", "-r", "2"], check=True, capture_output=True,
                         text=True).stdout
    pairs = dict(ln.split("=", 1) for ln in out.splitlines() if "=" in ln)
    return {k: pairs[k] for k in KEYS if k in pairs}


def _build(tmp_path: Path, name: str, *defines: str) -> Path:
    exe = tmp_path / name
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror",
                    f"-I{EXAMPLE}", *defines, "-o", str(exe), str(EXAMPLE / "pingpong.cc")],
                   check=True, capture_output=True, text=True)
    return exe


def test_alphabetical_tcb_keeps_the_checksum(tmp_path: Path, cachefit) -> None:
    out = tmp_path / "tcb_alpha.h"
    source = (EXAMPLE / "tcb_flat.h").read_bytes()
    # The command as documented: -o after `--` is taken as the output file.
    code, _, err = cachefit("reorder", "tcb", "--order", "alphabetical",
                            EXAMPLE / "tcb_flat.h", "--", "-std=c++17", "-o", out)
    assert code == 0, err
    assert (EXAMPLE / "tcb_flat.h").read_bytes() == source
    text = out.read_text()
    assert text != source.decode()
    reference = _run(_build(tmp_path, "flat"))
    alpha = _run(_build(tmp_path, "alpha", f'-DTCB_HEADER="{out}"'))
    assert set(reference) == set(KEYS)
    assert alpha == reference
