"""The object cache (docs/cache.md): what the key depends on, hits and misses, LRU
eviction under the size limit, CACHEFIT_CACHE=0 and `cachefit cache --clear`."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from wrapper_helpers import CACHEFIT, cache_stats, copy_project, needs_gcc, run, wrapper_env

from cachefit.errors import UserError
from cachefit.frontend.compiler_args import parse_command
from cachefit.pipeline.unit_cache import UnitCache, parse_size

GCC = shutil.which("gcc") or "cc"


def _cache(tmp: Path, **env: str) -> UnitCache:
    return UnitCache.from_env({"CACHEFIT_CACHE_DIR": str(tmp), **env})


def test_key_depends_on_text_flags_compiler_plan_and_debug_cwd(tmp_path: Path) -> None:
    c = _cache(tmp_path)
    cmd = parse_command(["-O2", "-c", "a.c", "-o", "a.o"])
    plan = {"records": {"item": {"order": ["b", "a"]}}}
    base = c.key(b"int x;", cmd, [GCC], plan, "/w", "c")
    assert base == c.key(b"int x;", cmd, [GCC], plan, "/w", "c")
    # the output name, -I/-D (already applied by the preprocessor) and -MD do not matter
    same = parse_command(["-O2", "-Iinc", "-DX=1", "-MMD", "-c", "a.c", "-o", "b.o"])
    assert c.key(b"int x;", same, [GCC], plan, "/w", "c") == base
    assert c.key(b"int x;", cmd, [GCC], plan, "/elsewhere", "c") == base   # no -g
    different = [
        c.key(b"int y;", cmd, [GCC], plan, "/w", "c"),
        c.key(b"int x;", parse_command(["-O3", "-c", "a.c"]), [GCC], plan, "/w", "c"),
        c.key(b"int x;", parse_command(["-O2", "-S", "a.c"]), [GCC], plan, "/w", "c"),
        c.key(b"int x;", cmd, [GCC, "-m32"], plan, "/w", "c"),
        c.key(b"int x;", cmd, [GCC], {"records": {"item": {"order": ["a", "b"]}}}, "/w", "c"),
        c.key(b"int x;", cmd, [GCC], plan, "/w", "c++"),
    ]
    assert len({base, *different}) == len(different) + 1
    g = parse_command(["-O2", "-g", "-c", "a.c"])
    assert c.key(b"int x;", g, [GCC], plan, "/w", "c") != \
        c.key(b"int x;", g, [GCC], plan, "/v", "c")


def test_compiler_version_is_asked_once(tmp_path: Path) -> None:
    c = _cache(tmp_path)
    ident = c.compiler_identity([GCC])
    assert "gcc" in ident.lower() or "cc" in ident
    memo = list((tmp_path / "objects" / "compilers").iterdir())
    assert len(memo) == 1
    memo[0].write_text("remembered")
    assert c.compiler_identity([GCC]) == "remembered"


def test_fetch_store_counts_and_eviction(tmp_path: Path) -> None:
    c = _cache(tmp_path / "c", CACHEFIT_CACHE_MAX_SIZE="3000")
    out = tmp_path / "out.o"
    for i in range(3):
        key = f"{i:02d}" * 32
        assert not c.fetch(key, str(out))
        out.write_bytes(bytes([i]) * 1000)
        c.store(key, str(out))
        os.utime(c._object(key), (1000 + i, 1000 + i))
    st = c.stats()
    assert (st.hits, st.misses) == (0, 3)
    # an entry is the object and its metadata (size and SHA-256): 1186 bytes; 3 > 3000
    # bytes: the oldest entry went, the newer ones stay
    entry = sum(p.stat().st_size for p in c._object("02" * 32).parent.glob("02*"))
    assert entry == 1186
    assert st.entries == 2 and st.size == 2 * entry
    assert not c.fetch("00" * 32, str(out))
    assert c.fetch("02" * 32, str(out)) and out.read_bytes() == bytes([2]) * 1000
    assert (c.stats().hits, c.stats().misses) == (1, 4)


@pytest.mark.parametrize("text, size", [("5G", 5 << 30), ("500M", 500 << 20), ("64k", 65536),
                                        ("1234", 1234), ("1.5G", 3 << 29)])
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_bad_size() -> None:
    with pytest.raises(UserError, match="CACHEFIT_CACHE_MAX_SIZE"):
        parse_size("lots")


@needs_gcc
def test_disabled_cache_and_clear_command(tmp_path: Path) -> None:
    work = copy_project("make_c", tmp_path / "p")
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC="gcc")
    run([CACHEFIT, "cc", "-c", "item.c", "main.c"], work, {**env, "CACHEFIT_CACHE": "0"})
    assert not (tmp_path / ".cache" / "objects" / "stats.json").exists()
    run([CACHEFIT, "cc", "-c", "item.c", "main.c"], work, env)
    run([CACHEFIT, "cc", "-c", "item.c", "main.c"], work, env)
    stats = run([CACHEFIT, "cache", "--stats"], work, env).stdout
    assert "hits             2" in stats and "objects          2" in stats
    cleared = run([CACHEFIT, "cache", "--clear"], work, env)
    assert "removed 2 cached objects" in cleared.stderr
    assert "objects          0" in run([CACHEFIT, "cache"], work, env).stdout


@needs_gcc
def test_a_hit_repeats_the_compilers_warnings(tmp_path: Path) -> None:
    work = copy_project("make_c", tmp_path / "p")
    (work / "warn.c").write_text('#include "item.h"\n'
                                 "long w(struct item *p) { int unused = 3; return p->id; }\n")
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC="gcc")
    first = run([CACHEFIT, "cc", "-Wall", "-c", "warn.c"], work, env)
    assert "unused" in first.stderr
    second = run([CACHEFIT, "cc", "-Wall", "-c", "warn.c"], work, env)
    assert run([CACHEFIT, "cache", "--json"], work, env).stdout.count('"hits": 1') == 1
    assert second.stderr == first.stderr


@needs_gcc
@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_a_hit_and_the_cache_follow_the_umask(tmp_path: Path, umask: int) -> None:
    """Issue 29, case 8: a fresh compile gives 0666 less the umask; a hit gave 0600."""
    work = copy_project("make_c", tmp_path / "p")
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC="gcc")
    for name in ("miss.o", "hit.o"):
        subprocess.run([CACHEFIT, "cc", "-c", "item.c", "-o", name], cwd=work, env=env,
                       check=True, umask=umask)
    assert cache_stats(env, work)["hits"] == 1
    objects = [work / "miss.o", work / "hit.o",
               *(tmp_path / ".cache" / "objects").glob("??/*.o")]
    assert len(objects) == 3
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in objects} == {oct(0o666 & ~umask)}


@pytest.mark.parametrize("part, damage", [
    (".o", "truncated"), (".o", "altered"), (".stderr", "altered"), (".unit", "truncated"),
    (".json", "altered")])
def test_a_damaged_entry_is_removed_counted_and_said(tmp_path: Path, part: str,
                                                    damage: str) -> None:
    """Issue 29, case 6: a truncated object was copied out as it was (the link then
    failed with "file format not recognized"). Each file of an entry is checked against
    the size and SHA-256 recorded when it was stored."""
    warnings: list[str] = []
    c = UnitCache.from_env({"CACHEFIT_CACHE_DIR": str(tmp_path / "c")}, warnings)
    key = "ab" * 32
    compiled = tmp_path / "compiled.o"
    compiled.write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    c.store(key, str(compiled), b"int transformed;\n", b"warning: unused\n")
    out = tmp_path / "out.o"
    hit = c.fetch(key, str(out))
    assert hit is not None and out.read_bytes() == compiled.read_bytes()
    assert (hit.messages, hit.unit_text) == (b"warning: unused\n", b"int transformed;\n")
    out.unlink()
    damaged = c._object(key).with_suffix(part)
    data = damaged.read_bytes()
    damaged.write_bytes(data[:len(data) // 2] if damage == "truncated"
                        else data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])
    assert c.fetch(key, str(out)) is None
    assert not out.exists()
    assert len(warnings) == 1 and "damaged" in warnings[0] and damaged.name in warnings[0]
    assert str(c._object(key)) in warnings[0] and "compiled again" in warnings[0]
    assert list(c._object(key).parent.iterdir()) == []      # the whole entry went
    st = c.stats()
    assert (st.hits, st.misses, st.damaged, st.entries) == (1, 1, 1, 0)
    c.store(key, str(compiled), b"int transformed;\n", b"warning: unused\n")
    assert c.fetch(key, str(out)) is not None and len(warnings) == 1


@needs_gcc
def test_a_truncated_object_is_compiled_again_and_the_build_goes_on(tmp_path: Path) -> None:
    work = copy_project("make_c", tmp_path / "p")
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CC="gcc")
    build = [CACHEFIT, "cc", "-O2", "item.c", "main.c", "list.c", "-o", "prog"]
    run(build, work, env)
    objects = sorted((tmp_path / ".cache" / "objects").glob("??/*.o"))
    assert len(objects) == 3
    objects[0].write_bytes(objects[0].read_bytes()[:100])
    second = run(build, work, env)
    warnings = [w for w in second.stderr.splitlines() if w.startswith("cachefit: warning:")]
    assert len(warnings) == 1 and "was damaged" in warnings[0], second.stderr
    assert run([str(work / "prog")], work, env).returncode == 0
    stats = cache_stats(env, work)
    assert (stats["hits"], stats["misses"], stats["damaged"]) == (2, 4, 1)
    third = run(build, work, env)
    assert "warning" not in third.stderr and cache_stats(env, work)["hits"] == 5
