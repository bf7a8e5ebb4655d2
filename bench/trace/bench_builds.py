"""Builds for the tracing benchmark: a runtime snapshot, the ipc and zlib binaries, inputs.

Every build goes into the work directory, never into the repository:
  WORK/runtime/KEY/   a copy of runtime/, or of $CACHEFIT_RUNTIME_DIR when that is set
                      (sources, headers, inline/, Makefile, ...; no build artefacts, not
                      the QEMU plugin), named by CACHEFIT_RUNTIME_DIR for every profile
                      build, so the archive is always compiled from these sources by the
                      profile build's own compiler (clang-19) into WORK/cache
                      (CACHEFIT_CACHE_DIR), and a prebuilt runtime/build/libcachefit_rt.a
                      (perhaps built by gcc, perhaps stale) is never picked up;
  WORK/plain/{ipc,zlib}              the plain builds (clang-19, no cachefit);
  WORK/builds/KEY/{ipc,zlib}/VARIANT the profile builds, KEY being a hash of the runtime
                      sources and of cachefit's build and trace modules, so any change
                      there rebuilds them (older KEY directories are kept: another run
                      may still be using them; delete them by hand).
`runtime_record` says which archive the profile builds linked and which compiler built
it (the archive's .comment section). The zlib source comes from `apt-get source zlib`.
This module changes nothing outside the work directory, and only reads git.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CFLAGS = "-O2 -gdwarf-4"
PROFILE_VARIANTS = ("allowlist", "allowlist-calls", "whole")
# Everything in runtime/ but build artefacts and the QEMU plugin (not part of profile builds).
_RUNTIME_SKIP = ("build", "qemu")
_ARTEFACTS = ("*.o", "*.a", "*.so", "*.bc", "*.pyc", "__pycache__")
_CACHEFIT_PARTS = ("src/cachefit/trace", "src/cachefit/pipeline")


def sh(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def _runtime_parts(root: Path) -> tuple[str, ...]:
    return tuple(sorted(p.name for p in root.iterdir() if p.name not in _RUNTIME_SKIP))


def _files(root: Path, parts: tuple[str, ...]) -> list[Path]:
    """The source files under root/part for each part (artefacts and build/ left out)."""
    out: list[Path] = []
    for part in parts:
        p = root / part
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file()
                          and "build" not in f.relative_to(p).parts
                          and "__pycache__" not in f.parts
                          and f.suffix not in (".o", ".a", ".so", ".bc", ".pyc"))
    return out


def _digest(root: Path, files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


class Builds:
    """The work directory's runtime snapshot and build key."""

    def __init__(self, work: Path) -> None:
        self.work = work
        # A runtime tree named by CACHEFIT_RUNTIME_DIR (e.g. a work copy being tuned) is
        # snapshotted instead of the repository's.
        rt = Path(os.environ.get("CACHEFIT_RUNTIME_DIR") or REPO / "runtime").resolve()
        self.runtime_source = rt
        self.runtime_parts = _runtime_parts(rt)
        self.runtime_sha = _digest(rt, _files(rt, self.runtime_parts))
        self.cachefit_sha = _digest(REPO, _files(REPO, _CACHEFIT_PARTS))
        self.key = hashlib.sha256((self.runtime_sha + self.cachefit_sha).encode()).hexdigest()[:16]
        self.runtime_dir = work / "runtime" / self.runtime_sha[:16]
        self.cache_dir = work / "cache"

    def snapshot_runtime(self) -> None:
        if (self.runtime_dir / "src").is_dir():
            return
        tmp = self.runtime_dir.with_name(self.runtime_dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for part in self.runtime_parts:
            src = self.runtime_source / part
            if src.is_dir():
                shutil.copytree(src, tmp / part,
                                ignore=shutil.ignore_patterns("build", *_ARTEFACTS))
            elif src.is_file():
                shutil.copy2(src, tmp / part)
        if _digest(tmp, _files(tmp, self.runtime_parts)) != self.runtime_sha:
            sys.exit(f"{self.runtime_source} changed while it was being copied; "
                     "run the benchmark again")
        os.replace(tmp, self.runtime_dir)

    def env(self) -> dict[str, str]:
        """The environment of builds and runs: no cachefit settings from outside, the
        venv's cachefit first on PATH, the snapshot runtime and the work cache."""
        env = dict(os.environ)
        for k in ("CACHEFIT_MODE", "CACHEFIT_CC", "CACHEFIT_CXX", "CACHEFIT_CONFIG",
                  "CACHEFIT_TRACE_DIR", "CACHEFIT_INLINE_CHECKS"):
            env.pop(k, None)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        env["CACHEFIT_RUNTIME_DIR"] = str(self.runtime_dir)
        env["CACHEFIT_CACHE_DIR"] = str(self.cache_dir)
        return env

    def build_dir(self, workload: str, variant: str) -> Path:
        if variant == "plain":
            return self.work / "plain" / workload
        return self.work / "builds" / self.key / workload / variant


def _write_toml(path: Path, types: str, entry: str, extra: str = "") -> Path:
    path.write_text(f'[trace]\ntypes = ["{types}"]\nentry = ["{entry}"]\n{extra}')
    return path


def _profile_env(env: dict[str, str], variant: str, cfg: Path, compiler_var: str,
                 compiler: str) -> dict[str, str]:
    venv = dict(env, CACHEFIT_MODE="profile", CACHEFIT_CONFIG=str(cfg))
    venv[compiler_var] = compiler
    if variant.endswith("-calls"):
        venv["CACHEFIT_INLINE_CHECKS"] = "0"
    return venv


def build_ipc(b: Builds) -> dict[str, Path]:
    """examples/ipc pingpong-flat: plain, and traced on tcb with entry ipc."""
    out: dict[str, Path] = {}
    env = b.env()
    allow = 'instrument = ["ipc", "tcb::charge_timeslice", "tcb::switch_to"]\n'
    extras = {"allowlist": allow, "allowlist-calls": allow, "whole": ""}
    for variant in ("plain", *PROFILE_VARIANTS):
        build = b.build_dir("ipc", variant)
        target = build / "pingpong-flat"
        if not target.exists():
            build.mkdir(parents=True, exist_ok=True)
            venv, cxx = dict(env), "clang++-19"
            if variant != "plain":
                cfg = _write_toml(build / "cachefit.toml", "tcb", "ipc", extras[variant])
                venv = _profile_env(env, variant, cfg, "CACHEFIT_CXX", "clang++-19")
                cxx = "cachefit c++"
            sh(["make", "-s", "-C", str(REPO / "examples" / "ipc"), f"CXX={cxx}",
                f"BUILD={build}", f"OPT={CFLAGS}", "CXXFLAGS=$(OPT) $(CXXSTD) $(WARN)",
                str(target)], env=venv)
        out[variant] = target
    return out


def fetch_zlib(work: Path) -> Path:
    src_root = work / "debian-src"
    found = sorted(src_root.glob("zlib-*/deflate.c"))
    if found:
        return found[0].parent
    src_root.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["apt-get", "source", "zlib"], cwd=src_root, capture_output=True,
                          text=True, check=False)
    found = sorted(src_root.glob("zlib-*/deflate.c"))
    if proc.returncode != 0 or not found:
        sys.exit("apt-get source zlib failed; add a deb-src line and run apt-get update "
                 f"(see bench/trace/README.md)\n{proc.stderr}")
    return found[0].parent


def build_zlib(b: Builds) -> dict[str, Path]:
    """Debian zlib's minigzip: plain, and traced on deflate_state with entry longest_match."""
    src = fetch_zlib(b.work)
    out: dict[str, Path] = {}
    env = b.env()
    allow = 'instrument = ["longest_match"]\n'
    extras = {"allowlist": allow, "allowlist-calls": allow, "whole": ""}
    for variant in ("plain", *PROFILE_VARIANTS):
        build = b.build_dir("zlib", variant)
        target = build / "minigzip"
        if not target.exists():
            if build.exists():
                shutil.rmtree(build)
            shutil.copytree(src, build)
            venv, cc = dict(env), "clang-19"
            if variant != "plain":
                cfg = _write_toml(build / "cachefit.toml", "deflate_state", "longest_match",
                                  'allocators = ["zalloc"]\ndeallocators = ["zfree"]\n'
                                  + extras[variant])
                venv = _profile_env(env, variant, cfg, "CACHEFIT_CC", "clang-19")
                cc = "cachefit cc"
            venv.update(CC=cc, CFLAGS=CFLAGS)
            sh(["./configure", "--static"], cwd=build, env=venv)
            sh(["make", "-s", "minigzip"], cwd=build, env=venv)
        out[variant] = target
    return out


def make_input(path: Path, size: int) -> Path:
    """Deterministic pseudo-text of `size` bytes (words drawn from a seeded generator)."""
    if path.exists() and path.stat().st_size == size:
        return path
    rng = random.Random(20240501)
    words = [''.join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    chunks: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) + "\n"
        chunks.append(line)
        total += len(line)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes("".join(chunks).encode()[:size])
    os.replace(tmp, path)
    return path


def _comments(path: Path) -> list[str]:
    """The distinct .comment strings (compiler identifications) of an object or archive."""
    proc = subprocess.run(["readelf", "-p", ".comment", str(path)], capture_output=True,
                          text=True, check=False)
    found: set[str] = set()
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("["):
            found.add(line.split("]", 1)[1].strip())
    return sorted(found)


def runtime_record(b: Builds, compiler: str) -> dict[str, object]:
    """Which runtime archive a profile build with `compiler` linked, and who built it."""
    saved = {k: os.environ.get(k) for k in ("CACHEFIT_RUNTIME_DIR", "CACHEFIT_CACHE_DIR")}
    os.environ["CACHEFIT_RUNTIME_DIR"] = str(b.runtime_dir)
    os.environ["CACHEFIT_CACHE_DIR"] = str(b.cache_dir)
    try:
        from cachefit.trace.runtime_build import runtime_library
        archive = runtime_library([compiler])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "runtime", *_CACHEFIT_PARTS],
                           capture_output=True, text=True, check=False).stdout.split("\n")
    return {"archive": str(archive), "archive_built_by": _comments(archive),
            "link_compiler": compiler, "runtime_source": str(b.runtime_source),
            "runtime_sources_sha256": b.runtime_sha,
            "cachefit_build_trace_sha256": b.cachefit_sha, "runtime_snapshot": str(b.runtime_dir),
            "git_head": head,
            "uncommitted_runtime_or_tracer_files": [d[3:] for d in dirty if d.strip()]}
