"""The link flags that make a profile-built executable export the tracing runtime.

Profile-built shared libraries call the executable's runtime (one runtime per process):
its entry points and state (`__cachefit_*`), the public API of cachefit.h (`cachefit_*`)
and the instrumentation callbacks (`__sanitizer_cov_*`, `__tsan_*`). The linker exports
such symbols by itself only to the libraries on the link line; a library loaded with
dlopen needs them in the executable's dynamic symbol table. Only these names are
exported, never everything (-rdynamic): GNU ld >= 2.35 and LLD take
`--export-dynamic-symbol=GLOB`; gold (whose option takes no globs), older or unknown
linkers get a `--dynamic-list` file with the same globs.

This module asks the compiler driver for its linker's version (`-Wl,--version`) and
writes the dynamic-list file; it never links anything itself.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.atomic_files import write_bytes_atomic

EXPORTED_GLOBS = ("__cachefit_*", "cachefit_*", "__sanitizer_cov_*", "__tsan_*")


@dataclass(frozen=True)
class Linker:
    """The linker a driver runs: "bfd", "gold", "lld" or "unknown", and its version."""

    kind: str
    version: tuple[int, ...] = ()

    @property
    def takes_export_globs(self) -> bool:
        return self.kind == "lld" or (self.kind == "bfd" and self.version >= (2, 35))


def parse_linker_version(text: str) -> Linker:
    """The linker named in the output of `DRIVER -Wl,--version`."""
    for line in text.splitlines():
        m = re.match(r"GNU ld .*?(\d+)\.(\d+)", line)
        if m:
            return Linker("bfd", (int(m.group(1)), int(m.group(2))))
        m = re.match(r"GNU gold .*?(\d+)\.(\d+)", line)
        if m:
            return Linker("gold", (int(m.group(1)), int(m.group(2))))
        m = re.search(r"\bLLD (\d+)\.(\d+)", line)
        if m:
            return Linker("lld", (int(m.group(1)), int(m.group(2))))
    return Linker("unknown")


def linker_of(compiler: Sequence[str], link_args: Sequence[str],
              env: Mapping[str, str]) -> Linker:
    """Ask the driver (with the link's -fuse-ld= / --ld-path= / -B options) which linker it
    runs."""
    chosen = [a for a in link_args if a.startswith(("-fuse-ld=", "--ld-path=", "-B"))]
    try:
        proc = subprocess.run([*compiler, *chosen, "-Wl,--version"], capture_output=True,
                              text=True, env=dict(env), check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return Linker("unknown")
    return parse_linker_version(proc.stdout + "\n" + proc.stderr)


def export_flags(linker: Linker, tmpdir: Path) -> list[str]:
    """Driver flags exporting EXPORTED_GLOBS from an executable."""
    if linker.takes_export_globs:
        return [f"-Wl,--export-dynamic-symbol={g}" for g in EXPORTED_GLOBS]
    path = tmpdir / "cachefit_exports.list"
    write_bytes_atomic(path, ("{\n" + "".join(f"  {g};\n" for g in EXPORTED_GLOBS)
                              + "};\n").encode())
    return [f"-Wl,--dynamic-list={path}"]
