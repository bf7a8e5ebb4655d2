"""L4Ka::Pistachio's pingpong traced in qemu-system-i386 (only when examples/pistachio has
been built: `make -C examples/pistachio build`; skipped otherwise)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

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
