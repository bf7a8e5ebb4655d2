"""L4Ka::Pistachio's pingpong traced in qemu-system-i386 (only when examples/pistachio has
been built: `make -C examples/pistachio build`; skipped otherwise), and the summary of the
whole reorder pipeline (only when `make -C examples/pistachio pipeline` has run)."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_records import read_record
from cachefit.model.profile import load
from cachefit.trace.qemu_backend import trace_qemu

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "out" / "pistachio"
KERNEL = OUT / "kernel-before" / "x86-kernel"
USER = OUT / "user"
PINGPONG = USER / "apps" / "bench" / "pingpong" / "pingpong"


def test_pingpong_ipc_touches_two_tcbs(plugin, tmp_path):
    if not (KERNEL.exists() and PINGPONG.exists()):
        pytest.skip("Pistachio is not built (make -C examples/pistachio build)")
    if shutil.which("qemu-system-i386") is None:
        pytest.skip("qemu-system-i386 is not installed")
    with open(REPO / "examples" / "pistachio" / "cachefit.toml", "rb") as fh:
        config = tomllib.load(fh)
    q = config["trace"]["qemu"]
    q.update(kernel=str(KERNEL), phase_elf=str(PINGPONG), overhead=False, timeout=300)
    cmd = ["qemu-system-i386", "-m", "256", "-cpu", "max", "-display", "none",
           "-serial", "stdio", "-monitor", "none", "-no-reboot",
           "-kernel", str(USER / "util" / "kickstart" / "kickstart"),
           "-initrd", f"{KERNEL},{USER / 'serv' / 'sigma0' / 'sigma0'},{PINGPONG}"]
    p = trace_qemu(cmd, config, str(tmp_path / "pingpong.profile.json"))
    t = p["types"]["tcb_t"]
    assert p["qemu"]["phase_reached"] == "ended"
    # 64 message sizes x 1000 round trips x (call + reply)
    assert p["invocations"] >= 128000
    top = t["sequences"][0]
    assert top["count"] > 0.9 * p["invocations"]
    assert {a[0] for a in top["accesses"]} == {0, 1}  # sender and receiver
    assert t["dropped"]["outside_objects"] > 0        # kernel stacks in the TCB blocks


SUMMARY = OUT / "summary.json"


def test_pipeline_summary_is_measured_from_both_traces():
    """The pipeline's summary (make -C examples/pistachio pipeline; skipped before it ran):
    the keys of issue 8, figures recomputed from the two traces and the kernels' DWARF, the
    paper's 3 -> 2 lines per IPC, and pingpong's output unchanged."""
    if not SUMMARY.exists():
        pytest.skip("the Pistachio pipeline has not run (make -C examples/pistachio pipeline)")
    sys.path.insert(0, str(REPO / "examples" / "pistachio"))
    try:
        import pipeline
    finally:
        sys.path.pop(0)
    s = json.loads(SUMMARY.read_text())
    assert set(s) == {"lines_per_ipc", "dirty_lines_per_ipc", "sizeof", "pingpong_ok", "logs"}
    assert set(s["lines_per_ipc"]) == {"before", "after", "lower_bound"}
    assert set(s["dirty_lines_per_ipc"]) == set(s["sizeof"]) == set(s["logs"]) == \
        {"before", "after"}
    assert s["pingpong_ok"] is True
    for variant in ("before", "after"):
        fig = pipeline.measure(load(OUT / f"{variant}.profile.json"), "tcb_t")
        assert s["lines_per_ipc"][variant] == round(fig.lines, 4)
        assert s["dirty_lines_per_ipc"][variant] == round(fig.dirty, 4)
        kernel = OUT / f"kernel-{variant}" / "x86-kernel"
        assert s["sizeof"][variant] == read_record(str(kernel), "tcb_t").size
        log = Path(s["logs"][variant])
        assert log.is_file() and len(pipeline.pingpong_lines(log)) > 128
    assert pipeline.pingpong_lines(Path(s["logs"]["before"])) == \
        pipeline.pingpong_lines(Path(s["logs"]["after"]))
    # paper 000: an IPC touches 3 lines of tcb_t before the reorder and 2 after
    assert round(s["lines_per_ipc"]["before"]) == 3 and round(s["lines_per_ipc"]["after"]) == 2
    assert s["lines_per_ipc"]["after"] <= s["lines_per_ipc"]["lower_bound"] + 0.01
    reorder = json.loads((OUT / "reorder.json").read_text())
    assert s["lines_per_ipc"]["lower_bound"] == round(reorder["lines"]["lower_bound"], 4)
    assert s["sizeof"]["after"] == reorder["size"]["after"]


def _by_member(profile_path: Path) -> list[tuple[int, str, int, int, str]]:
    """The most frequent tcb_t sequence with offsets as (member, offset in the member)."""
    p = load(profile_path)
    t = p.types["tcb_t"]
    top = max(t.sequences, key=lambda s: s.count)
    out = []
    for a in top.accesses:
        f = next(f for f in t.fields if f.offset <= a.offset < f.offset + max(f.size, 1))
        out.append((a.role, f.name, a.offset - f.offset, a.size, a.mode))
    return out


def test_reordered_kernel_runs_the_same_fast_path():
    """The IPC fast path makes the same accesses to the same members, in the same order, in
    both kernels; only the offsets differ (and the sender's `space` moved to the first line)."""
    if not SUMMARY.exists():
        pytest.skip("the Pistachio pipeline has not run (make -C examples/pistachio pipeline)")
    before, after = _by_member(OUT / "before.profile.json"), _by_member(OUT / "after.profile.json")
    assert before == after
    assert (0, "space", 0, 4, "r") in before
    offset = {v: next(f.offset for f in load(OUT / f"{v}.profile.json").types["tcb_t"].fields
                      if f.name == "space") for v in ("before", "after")}
    assert offset["before"] >= 64 > offset["after"]
