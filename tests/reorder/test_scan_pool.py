"""The code-base scan of `cachefit reorder -p`: the same answer for every `-j N`, a second
run answered from the scan cache without parsing, a header edit invalidating only the units
that include it, and damaged cache entries ignored."""

from __future__ import annotations

import json
import pickle
import zlib
from collections import Counter
from pathlib import Path

import pytest

from cachefit.frontend import clang_parse
from cachefit.reorder import scan_cache, scan_pool
from cachefit.rewrite import units_compile

REC = "struct rec {\n    int a;\n    char b;\n    long c;\n    int d;\n};\n"
EXTRA = '#include "rec.h"\nstatic inline int extra_a(struct rec *r) { return r->a; }\n'
# adds the memset range from b to the end: b, c, d stay together after a
EXTRA_RANGE = ('#include <stddef.h>\n#include <string.h>\n' + EXTRA +
               "static inline void extra_clear(struct rec *r)\n"
               "{ memset(&r->b, 0, sizeof(*r) - offsetof(struct rec, b)); }\n")
UNITS = {
    "u0.c": "int unrelated(void) { return 0; }\n",       # does not include rec.h
    "u1.c": '#include "rec.h"\nint get_d(struct rec *r) { return r->d; }\n',
    "u2.c": '#include "extra.h"\nint get_a(struct rec *r) { return extra_a(r); }\n',
    "u3.c": ('#include <stddef.h>\n#include "rec.h"\n'
             "unsigned long span(void) { return offsetof(struct rec, d) - "
             "offsetof(struct rec, c); }\n"),
    "u4.c": ('#include <stddef.h>\n#include "rec.h"\nvoid set_c(struct rec *r) { r->c = 1; }\n'
             '_Static_assert(offsetof(struct rec, d) == 16, "d");\n'),
}
ORDER = "b,a,c,d"   # keeps a, b before c and d after it (the offset difference in u3.c)


def _project(root: Path) -> Path:
    (root / "include").mkdir(parents=True)
    (root / "include" / "rec.h").write_text(REC)
    (root / "include" / "extra.h").write_text(EXTRA)
    for name, text in UNITS.items():
        (root / name).write_text(text)
    db = [{"directory": str(root), "file": str(root / u),
           "arguments": ["cc", "-Iinclude", "-c", u]} for u in UNITS]
    (root / "compile_commands.json").write_text(json.dumps(db))
    return root


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The five-unit project, with a scan cache of its own (empty)."""
    monkeypatch.setattr(scan_cache, "default_root", lambda: tmp_path / "cache")
    return _project(tmp_path / "p")


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the units libclang parses in this process, by file name and caller."""
    counts: Counter[str] = Counter()
    real = clang_parse.parse_unit

    def counting(module: str):
        def parse(path, *args, **kwargs):
            counts[f"{module}:{Path(path).name}"] += 1
            return real(path, *args, **kwargs)
        return parse

    monkeypatch.setattr(scan_pool, "parse_unit", counting("scan"))
    monkeypatch.setattr(units_compile, "parse_unit", counting("compile"))
    return counts


def _reorder(cachefit, root: Path, *extra: str) -> tuple[dict, str]:
    """`reorder rec --order ORDER --json` and `--diff`: the JSON and the diff plus the
    summary's scan line."""
    code, out, err = cachefit("reorder", "rec", "-p", root, "--order", ORDER, "--json", *extra)
    assert code == 0, err
    code, diff, err = cachefit("reorder", "rec", "-p", root, "--order", ORDER, "--diff", *extra)
    assert code == 0, err
    scan = [line for line in err.splitlines() if line.startswith("scan: ")]
    assert len(scan) == 1, err
    return json.loads(out), diff + scan[0]


def test_one_and_two_jobs_give_the_same_answer(project: Path, cachefit) -> None:
    one, text_one = _reorder(cachefit, project, "-j", "1", "--no-scan-cache")
    two, text_two = _reorder(cachefit, project, "-j", "2", "--no-scan-cache")
    assert one == two
    assert text_one.replace("-j 1", "-j 2") == text_two
    assert text_two.endswith("scan: 5 units, 5 parsed, 0 from the scan cache (-j 2)")
    # merged in unit order, whichever worker scanned which unit
    assert [(c["kind"], c["location"].split(":")[0].rsplit("/", 1)[-1])
            for c in one["constraints"]] == [("same_side", "u3.c"), ("same_side", "u3.c"),
                                             ("pin", "u4.c")]
    assert not (project.parent / "cache").exists()


def test_the_second_run_parses_only_the_defining_unit(project: Path, cachefit,
                                                      parses: Counter[str]) -> None:
    first, _ = _reorder(cachefit, project, "-j", "2")    # fills the cache in the workers
    # here: u0.c and u1.c while looking for the definition (u0.c once: the --diff run
    # knows it has none), u1.c to rewrite; u2.c .. u4.c in the workers
    assert parses == Counter({"scan:u0.c": 1, "scan:u1.c": 2}), parses
    parses.clear()
    second, text = _reorder(cachefit, project, "-j", "1")
    assert second == first
    assert text.endswith("scan: 5 units, 0 parsed, 5 from the scan cache (-j 1)")
    # twice (--json, --diff): the unit that defines rec, to rewrite it; u0.c, which does
    # not define it, is known not to; no unit is parsed to scan or compile-check it
    assert parses == Counter({"scan:u1.c": 2}), parses


def test_an_edited_header_invalidates_the_units_that_include_it(project: Path, cachefit,
                                                                parses: Counter[str]) -> None:
    before, _ = _reorder(cachefit, project, "-j", "1")
    assert len(before["constraints"]) == 3
    (project / "include" / "extra.h").write_text(EXTRA_RANGE)
    parses.clear()
    code, out, err = cachefit("reorder", "rec", "-p", project, "--order", ORDER, "--json",
                              "-j", "1")
    # the new memset range keeps a before b: b,a,c,d breaks it
    assert code == 2 and not out, err
    assert err.startswith(f"cachefit: error: {project / 'include' / 'extra.h'}:6:3: "), err
    assert "memset of a byte range of rec" in err, err
    assert parses == Counter({"scan:u1.c": 1, "scan:u2.c": 1}), parses
    code, out, err = cachefit("reorder", "rec", "-p", project, "--order", "a,b,c,d", "--json",
                              "-j", "1")
    assert code == 0, err
    kinds = {(c["kind"], c["location"].rsplit("/", 1)[-1].split(":")[0])
             for c in json.loads(out)["constraints"]}
    assert ("same_side", "extra.h") in kinds, kinds
    # back to the old header (a branch switched back): its answers are still there
    (project / "include" / "extra.h").write_text(EXTRA)
    parses.clear()
    again, text = _reorder(cachefit, project, "-j", "1")
    assert again == before and text.endswith("0 parsed, 5 from the scan cache (-j 1)")
    assert parses == Counter({"scan:u1.c": 2}), parses


def test_damaged_cache_entries_are_ignored_and_replaced(project: Path, cachefit,
                                                         parses: Counter[str]) -> None:
    first, _ = _reorder(cachefit, project, "-j", "1")
    entries = sorted((project.parent / "cache").rglob("*.pickle"))
    assert len(entries) >= 5
    def damage(i: int, entry: Path) -> bytes:
        key = entry.stem
        return [entry.read_bytes()[:entry.stat().st_size // 2], b"", b"not zlib",
                zlib.compress(b"not a pickle"), zlib.compress(pickle.dumps(["a", "list"])),
                zlib.compress(pickle.dumps({"format": 2, "key": "other", "variants": []})),
                zlib.compress(pickle.dumps({"format": 2, "key": key, "variants": [("x", 1)]})),
                zlib.compress(pickle.dumps({"format": 2, "key": key,
                                            "variants": [([("/f", "not bytes")], 1)]}))][i % 8]

    for i, entry in enumerate(entries):
        entry.write_bytes(damage(i, entry))
    parses.clear()
    again, text = _reorder(cachefit, project, "-j", "1")
    assert again == first
    # the --json run parsed every unit again (and rewrote the entries), --diff hit them
    assert all(parses[f"scan:{u}"] == 1 for u in ("u2.c", "u3.c", "u4.c")), parses
    assert all(parses[f"compile:{u}"] == 1 for u in ("u2.c", "u3.c", "u4.c")), parses
    assert text.endswith("scan: 5 units, 0 parsed, 5 from the scan cache (-j 1)")


def test_a_unit_that_does_not_compile_is_one_error_from_a_worker(project: Path,
                                                                  cachefit) -> None:
    (project / "u4.c").write_text('#include "rec.h"\nint broken(struct rec *r) { return r->e; }\n')
    code, out, err = cachefit("reorder", "rec", "-p", project, "--order", ORDER, "-j", "2")
    assert code == 2 and not out
    assert err.startswith(f"cachefit: error: {project / 'u4.c'}:2:"), err
    assert "does not compile" in err and len(err.splitlines()) <= 6, err


def test_jobs_must_be_positive(project: Path, cachefit) -> None:
    code, _out, err = cachefit("reorder", "rec", "-p", project, "--order", ORDER, "-j", "0")
    assert code == 2 and err.startswith("cachefit: error: -j 0: "), err


def test_cache_clear_removes_every_entry(project: Path, cachefit) -> None:
    _reorder(cachefit, project, "-j", "1")
    root = project.parent / "cache"
    n = len(list(root.rglob("*.pickle")))
    assert n >= 5
    assert scan_cache.clear() == n
    assert not list(root.rglob("*"))


def test_relative_include_paths_follow_the_working_directory(tmp_path: Path, cachefit,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """`FILE... -- -Iinc` from two directories whose inc/extra.h differ (one's clears a byte
    range of rec, two's is empty): each run, and each of its workers, reads its own header,
    and the cache keeps the two apart (the units' paths and arguments are the same)."""
    monkeypatch.setattr(scan_cache, "default_root", lambda: tmp_path / "cache")
    src = tmp_path / "src"
    src.mkdir()
    (src / "rec.h").write_text(REC + '#include "extra.h"\n')
    units = []
    for i in range(3):
        (src / f"u{i}.c").write_text(f'#include "rec.h"\nint f{i}(struct rec *r) '
                                     "{ return r->a; }\n")
        units.append(src / f"u{i}.c")
    (tmp_path / "one" / "inc").mkdir(parents=True)
    (tmp_path / "one" / "inc" / "extra.h").write_text(
        "#include <stddef.h>\n#include <string.h>\n"
        "static inline void clear(struct rec *r)\n"
        "{ memset(&r->b, 0, sizeof(*r) - offsetof(struct rec, b)); }\n")
    (tmp_path / "two" / "inc").mkdir(parents=True)
    (tmp_path / "two" / "inc" / "extra.h").write_text("/* nothing */\n")
    for _ in range(2):
        for name, found in (("one", {"inc/extra.h"}), ("two", set())):
            monkeypatch.chdir(tmp_path / name)
            code, out, err = cachefit("reorder", "rec", *units, "--order", "a,b,c,d",
                                      "--json", "-j", "2", "--", "-Iinc")
            assert code == 0, err
            where = {c["location"].split(":")[0] for c in json.loads(out)["constraints"]}
            assert where == found, (name, where)


def test_units_searched_before_the_definition_are_merged_in_unit_order(
        tmp_path: Path, cachefit, monkeypatch: pytest.MonkeyPatch) -> None:
    """The definition is in the last unit; the units before it (parsed while searching it,
    scanned in this process or handed to idle workers) initialise rec by position in
    code the preprocessor skips: the first refusal is u0.c's for every -j."""
    monkeypatch.setattr(scan_cache, "default_root", lambda: tmp_path / "cache")
    names = [f"u{i}.c" for i in range(5)]
    for i, name in enumerate(names[:-1]):
        skipped = "#if 0\nstruct rec x = {1, 2, 3, 4};\n#endif\n" if i % 2 == 0 else ""
        (tmp_path / name).write_text(f"struct rec;\n{skipped}int f{i}(void) {{ return {i}; }}\n")
    (tmp_path / names[-1]).write_text(REC + "int get(struct rec *r) { return r->a; }\n")
    db = [{"directory": str(tmp_path), "file": str(tmp_path / u), "arguments": ["cc", "-c", u]}
          for u in names]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    errors = []
    for jobs in ("1", "2", "2", "1"):     # the second pair from the cache
        code, out, err = cachefit("reorder", "rec", "-p", tmp_path, "--order", "a,b,c,d",
                                  "-j", jobs)
        assert code == 2 and not out, err
        errors.append(err)
    assert errors[0].startswith(f"cachefit: error: {tmp_path / 'u0.c'}:3:16: "), errors[0]
    assert "preprocessor skipped" in errors[0] and "1 more" in errors[0], errors[0]
    assert errors == [errors[0]] * 4


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_unit_listed_twice_is_scanned_once(project: Path, cachefit, jobs: str) -> None:
    """libevent's CMake build compiles buffer.c, event.c, ... into both libevent and
    libevent_core with the same flags: compile_commands.json lists each unit twice (other
    outputs only). The scan crashed with a KeyError (scan_pool.scan_code popped the parsed
    unit for the first entry, then again for the second)."""
    db = json.loads((project / "compile_commands.json").read_text())
    twice = [{**e, "arguments": [*e["arguments"], "-o", f"{lib}/{e['file']}.o"]}
             for lib in ("core", "all") for e in db]
    (project / "compile_commands.json").write_text(json.dumps(twice))
    code, diff, err = cachefit("reorder", "rec", "-p", project, "--order", ORDER, "--diff",
                               "-j", jobs, "--no-scan-cache")
    assert code == 0, err
    assert "+    char b;\n" in diff and "scan: 5 units" in err, err
    code, out, err = cachefit("reorder", "rec", project / "u1.c", project / "u1.c",
                              "--order", ORDER, "--", f"-I{project / 'include'}")
    assert code == 0, err


def test_a_tmpdir_too_long_for_the_fork_servers_socket_scans_in_this_process(
        tmp_path: Path) -> None:
    """The fork server's socket is made in TMPDIR; past 108 bytes AF_UNIX refuses the path
    ("AF_UNIX path too long", a traceback from `reorder -j 2`, seen under pytest's long
    temporary directories). The pool then works in this process, with the same results."""
    import subprocess
    import sys
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    code = ("from cachefit.parallel import WorkerPool, ordered_map\n"
            "print(list(ordered_map(abs, [-1, -2, -3], 2)))\n"
            "with WorkerPool(2, 3) as pool: print(pool.parallel)\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ,
                          "TMPDIR": str(deep)}, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[1, 2, 3]", "False"]
