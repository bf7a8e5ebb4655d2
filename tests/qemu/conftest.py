"""Fixtures for the QEMU plugin tests: qemu-user, the plugin library, the test programs.

Everything is skipped (with the reason) when qemu-user is missing and cannot be installed,
when gcc is missing, or when the plugin cannot be built (its header comes from Debian's qemu
source package, which needs apt's deb-src entries and the network).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _ensure_qemu_user() -> str | None:
    """None when qemu-x86_64 is there (installing it when root), else why not."""
    if shutil.which("qemu-x86_64"):
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "qemu-user is not installed (apt-get install qemu-user)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "qemu-user"],
                   env=env, capture_output=True)
    return None if shutil.which("qemu-x86_64") else "qemu-user could not be installed"


@pytest.fixture(scope="session")
def plugin() -> Path:
    why = _ensure_qemu_user()
    if why:
        pytest.skip(why)
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    from cachefit.errors import CachefitError
    from cachefit.trace import qemu_backend

    # `make -C runtime/qemu` builds into the repository; a lock makes the other
    # pytest-xdist workers (and other test runs) wait for the first build and then find the
    # library up to date, instead of compiling over it while it is loaded.
    qemu_backend.PLUGIN_LIB.parent.mkdir(parents=True, exist_ok=True)
    with open(qemu_backend.PLUGIN_LIB.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return qemu_backend.build_plugin()
        except CachefitError as exc:
            pytest.skip(f"the QEMU plugin cannot be built: {exc.render()}")


@pytest.fixture(scope="session")
def progs(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """progs.c built static, as a PIE (dynamic) and, when gcc-multilib is there, for i386."""
    out = tmp_path_factory.mktemp("qemu-progs")
    built: dict[str, Path] = {}
    variants = {"static": ["-static"], "pie": ["-fPIE", "-pie"], "i386": ["-m32", "-static"]}
    for name, flags in variants.items():
        exe = out / f"progs-{name}"
        proc = subprocess.run(["gcc", "-O0", "-g", *flags, "-o", str(exe), str(HERE / "progs.c")],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            built[name] = exe
        elif name == "static":
            pytest.skip(f"cannot build the test program: {proc.stderr.strip()[:200]}")
    return built


@pytest.fixture(scope="session")
def minikernel(plugin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multiboot test kernel (tests/qemu/minikernel), for qemu-system-i386."""
    if shutil.which("qemu-system-i386") is None:
        pytest.skip("qemu-system-i386 is not installed (apt-get install qemu-system-x86)")
    src = HERE / "minikernel"
    exe = tmp_path_factory.mktemp("minikernel") / "kernel.elf"
    proc = subprocess.run(
        ["gcc", "-m32", "-ffreestanding", "-nostdlib", "-fno-pie", "-no-pie",
         "-fno-stack-protector", "-fcf-protection=none", "-O0", "-g", "-Wl,--build-id=none",
         "-Wl,--no-warn-rwx-segments", "-T", str(src / "kernel.ld"), "-o", str(exe),
         str(src / "boot.S"), str(src / "kernel.c")], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot build the test kernel (gcc-multilib?): {proc.stderr.strip()[:200]}")
    return exe
