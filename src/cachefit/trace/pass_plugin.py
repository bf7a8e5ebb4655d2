"""The LLVM pass plugin that coalesces runs of access checks, built once per compiler.

runtime/pass/cf_coalesce.cpp replaces, in each basic block, a run of sanitizer-coverage
calls through one base pointer with constant offsets by one call of __cachefit_run (see
its header). The second step of a profile build's compile (cachefit.trace.sancov_inline)
loads it with `-fpass-plugin=`. This module finds the compiler's `llvm-config` (next to
the compiler, else `llvm-config-<major>` on PATH; its LLVM major version must be the
compiler's), builds the plugin with that installation's `clang++` and `--cxxflags` into
the cache directory (`pass-plugin/<hash of source and llvm-config --version>.so`) and
gives the flag. When it cannot (no llvm-config or headers, i.e. llvm-NN-dev not
installed; another LLVM version; a failed build) the unit is compiled without the plugin:
the profile is the same, the traced program slower; one note says so (once per
`cachefit build`, through a file next to its cache notice). A cache directory that cannot
be written is said by the command's one cache warning, and the plugin is left out.
CACHEFIT_COALESCE=0 turns the plugin off. It never changes what is instrumented and runs
no compile but the plugin's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.cache_files import NOTICE_ENV, CacheWrites, build_cached, cache_dir
from cachefit.trace.runtime_build import runtime_dir

PASS_SOURCE = "pass/cf_coalesce.cpp"
ENV = "CACHEFIT_COALESCE"
_HEADER = Path("llvm") / "Passes" / "PassPlugin.h"
MIN_LLVM = 19       # the API cf_coalesce.cpp is written for (opaque pointers)


@dataclass(frozen=True)
class Plugin:
    """The plugin to load in step 2, or why there is none (`note`: to tell the user)."""

    path: Path | None
    note: str = ""


@dataclass(frozen=True)
class LlvmInstall:
    """What `llvm-config` says of the LLVM installation that matches the compiler."""

    config: Path
    version: str
    includedir: Path
    bindir: Path
    cxxflags: tuple[str, ...]


def enabled(env: Mapping[str, str]) -> bool:
    """CACHEFIT_COALESCE=0 compiles step 2 without the plugin (for measurements)."""
    return env.get(ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def _output(cmd: Sequence[str], env: Mapping[str, str]) -> str | None:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, check=False,
                              env=dict(env), timeout=60)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def _major(version: str) -> str:
    return version.strip().split(".")[0]


def llvm_install(compiler: Sequence[str], env: Mapping[str, str]) -> LlvmInstall | str:
    """The compiler's LLVM installation, or why it has none usable for a plugin."""
    exe = shutil.which(compiler[0], path=env.get("PATH"))
    if exe is None:
        return f"{compiler[0]} not found"
    version = _output([exe, *compiler[1:], "-dumpversion"], env)
    if not version or not version.strip():
        return f"{compiler[0]} -dumpversion failed"
    major = _major(version)
    if not major.isdigit() or int(major) < MIN_LLVM:
        return (f"{compiler[0]} is version {version.strip()}, the plugin needs LLVM "
                f"{MIN_LLVM} or later")
    # The compiler's own installation first (/usr/bin/clang-19 -> /usr/lib/llvm-19/bin),
    # then the versioned name; /usr/bin/llvm-config may be another LLVM's.
    candidates = [Path(exe).resolve().parent / "llvm-config"]
    named = shutil.which(f"llvm-config-{major}", path=env.get("PATH"))
    if named:
        candidates.append(Path(named))
    candidates.append(Path(exe).parent / "llvm-config")
    why = f"no llvm-config next to {compiler[0]} and no llvm-config-{major} on PATH"
    for config in dict.fromkeys(candidates):
        if not (config.is_file() and os.access(config, os.X_OK)):
            continue
        out = _output([str(config), "--version", "--includedir", "--bindir", "--cxxflags"],
                      env)
        lines = out.splitlines() if out else []
        if len(lines) != 4:
            why = f"{config} --version --includedir --bindir --cxxflags failed"
        elif _major(lines[0]) != major:
            why = f"{config} is LLVM {lines[0].strip()}, {compiler[0]} is {version.strip()}"
        else:
            return LlvmInstall(config, lines[0].strip(), Path(lines[1].strip()),
                               Path(lines[2].strip()), tuple(lines[3].split()))
    return why


class _BuildFailed(Exception):
    """The plugin's compile failed (its message)."""


def _build(llvm: LlvmInstall, compiler: Sequence[str], src: Path, env: Mapping[str, str],
           writes: CacheWrites | None) -> Plugin:
    """The plugin in the cache (built now unless there), or why it cannot be. A cache
    that cannot be written is said as `writes`' one warning (no note of its own): the
    plugin takes seconds to build, so it is not built per command outside the cache."""
    h = hashlib.sha256(src.read_bytes())
    h.update(llvm.version.encode())
    target = cache_dir() / "pass-plugin" / f"{h.hexdigest()[:16]}.so"
    failed = target.with_suffix(".failed")
    if failed.is_file():            # a build failed before: do not pay for it per unit
        return Plugin(None, _note(failed.read_text().strip()))
    cxx = llvm.bindir / "clang++"
    cxx_cmd = [str(cxx)] if cxx.is_file() else [*compiler]

    def compile_plugin(out: Path) -> None:
        # The driver's object file between compile and link goes to TMPDIR: the build's
        # own scratch directory, removed with it also when the build is interrupted.
        proc = subprocess.run([*cxx_cmd, "-shared", "-fPIC", "-O2", *llvm.cxxflags,
                               "-x", "c++", str(src), "-o", str(out)],
                              capture_output=True, text=True, check=False,
                              env={**env, "TMPDIR": str(out.parent)})
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["no message"])[0]
            raise _BuildFailed(f"building {src.name} failed: {first}")

    try:
        return Plugin(build_cached(target, compile_plugin))
    except _BuildFailed as exc:
        why = f"{exc}; remove {failed} to try again"
        try:
            failed.write_text(f"{why}\n")
        except OSError:
            pass
        return Plugin(None, _note(why))
    except OSError as exc:
        if writes is not None:
            writes.failure(exc)
            return Plugin(None)
        return Plugin(None, _note(f"the cache directory cannot be written "
                                  f"({exc.strerror or exc})"))


def plugin(compiler: Sequence[str], env: Mapping[str, str],
           writes: CacheWrites | None = None) -> Plugin:
    """The plugin for this compiler, built into the cache when needed, or why not
    (`writes`: the command's use of the cache, see _build)."""
    if not enabled(env) or (writes is not None and writes.failed):
        return Plugin(None)
    src = runtime_dir() / PASS_SOURCE
    if not src.is_file():
        return Plugin(None, _note(f"{src} is missing"))
    llvm = llvm_install(compiler, env)
    if isinstance(llvm, str):
        return Plugin(None, _note(llvm))
    if not (llvm.includedir / _HEADER).is_file():
        return Plugin(None, _note(f"{llvm.includedir / _HEADER} is missing (install "
                                  f"llvm-{_major(llvm.version)}-dev)"))
    return _build(llvm, compiler, src, env, writes)


def _note(why: str) -> str:
    return (f"access checks are not coalesced ({why}); the profile is the same, the "
            f"traced program slower (set {ENV}=0 to silence this)")


def plugin_args(compiler: Sequence[str], env: Mapping[str, str],
                warnings: list[str] | None = None,
                writes: CacheWrites | None = None) -> list[str]:
    """The flags that load the plugin in step 2 (none when it cannot be had); a note in
    `warnings`, said once per `cachefit build` (when NOTICE_ENV names its notice file)."""
    found = plugin(compiler, env, writes)
    if found.path is not None:
        return [f"-fpass-plugin={found.path}"]
    if found.note and warnings is not None and _first_note(env):
        warnings.append(found.note)
    return []


def _first_note(env: Mapping[str, str]) -> bool:
    """Whether this is the first note of the build: under `cachefit build`, the process
    that creates `<notice file>.pass-plugin`; outside one, every compile command."""
    notice = env.get(NOTICE_ENV)
    if not notice:
        return True
    try:
        fd = os.open(f"{notice}.pass-plugin", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return False
    except OSError:
        return True
    os.close(fd)
    return True
