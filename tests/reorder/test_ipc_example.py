"""The bundled example: tcb in alphabetical order compiles and pingpong's checksums agree;
with a traced profile of the pingpong workload, the optimized flat tcb touches no more
lines per IPC than the hand-tuned order and fewer than the alphabetical one, replaying the
profile on the compiler's layouts of the three headers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cachefit.frontend.clang_records import load_record
from cachefit.layout import evaluate_order
from cachefit.model.profile import load
from cachefit.reorder.order_choice import profile_entry
from compiled_helpers import private_cache

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


def _profile(tmp_path: Path) -> Path:
    """Build pingpong-flat in profile mode through `cachefit c++` and trace it."""
    (tmp_path / "cachefit.toml").write_text('[trace]\ntypes = ["tcb"]\nentry = ["ipc"]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    env["CACHEFIT_CACHE_DIR"] = str(private_cache(tmp_path))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    build = tmp_path / "build"
    subprocess.run(["make", "-s", "-C", str(EXAMPLE), "CXX=cachefit c++", f"BUILD={build}",
                    str(build / "pingpong-flat")], check=True, capture_output=True,
                   env={**env, "CACHEFIT_MODE": "profile", "CACHEFIT_CXX": "clang++-19",
                        "CACHEFIT_CONFIG": str(tmp_path / "cachefit.toml")})
    subprocess.run([sys.executable, "-m", "cachefit.cli.main", "trace", "-o", "ipc.json", "--",
                    str(build / "pingpong-flat"), "-n", "300", "-r", "2"], check=True,
                   capture_output=True, cwd=tmp_path, env=env)
    return tmp_path / "ipc.json"


def _lines_per_ipc(header: Path, profile: Path) -> tuple[float, int]:
    """Replay the profile on the compiler's layout of tcb in `header`: (lines, sizeof)."""
    record = load_record(str(header), ["-std=c++17", f"-I{EXAMPLE}"], "tcb")
    entry, _ = profile_entry(load(profile), str(profile), record, "tcb")
    ev = evaluate_order(record, entry, [f.name for f in record.fields], object_align=64,
                        allow_growth=True)
    # The evaluation places the fields exactly where the compiler did.
    assert ev.offsets == {f.name: f.offset for f in record.fields}
    assert ev.size == record.size
    return ev.lines, record.size


@pytest.mark.skipif(shutil.which("clang++-19") is None, reason="clang++-19 not available")
def test_optimized_tcb_beats_hand_tuned_and_alphabetical(tmp_path: Path, cachefit) -> None:
    profile = _profile(tmp_path)
    opt, alpha = tmp_path / "tcb_opt.h", tmp_path / "tcb_alpha.h"
    code, out, err = cachefit("reorder", "tcb", "--profile", profile, "--object-align", "64",
                              "--json", EXAMPLE / "tcb_flat.h", "-o", opt, "--",
                              "-std=c++17", f"-I{EXAMPLE}")
    assert code == 0, err
    report = json.loads(out)
    code, _, err = cachefit("reorder", "tcb", "--order", "alphabetical",
                            EXAMPLE / "tcb_flat.h", "-o", alpha, "--", "-std=c++17",
                            f"-I{EXAMPLE}")
    assert code == 0, err
    hand, hand_size = _lines_per_ipc(EXAMPLE / "tcb_flat.h", profile)
    optimized, opt_size = _lines_per_ipc(opt, profile)
    alphabetical, _ = _lines_per_ipc(alpha, profile)
    figures = f"hand-tuned {hand:.3f}, optimized {optimized:.3f}, " \
              f"alphabetical {alphabetical:.3f} lines per IPC"
    assert optimized <= hand, figures
    assert optimized < alphabetical, figures
    assert opt_size <= hand_size
    # The optimizer's own prediction is the compiler's layout replayed.
    assert report["lines"]["before"] == pytest.approx(hand)
    assert report["lines"]["after"] == pytest.approx(optimized)
    assert report["lines"]["lower_bound"] <= optimized + 1e-9
    print(figures)
    # And the program still computes the same thing with the optimized tcb.
    reference = _run(_build(tmp_path, "flat"))
    assert _run(_build(tmp_path, "opt", f'-DTCB_HEADER="{opt}"')) == reference
