"""Both front ends on the corpus, against the compilers and against each other.

* libclang front end (`show --json` objects) vs. the figures gcc 12 and clang-19 print.
* DWARF front end vs. the same figures, for DWARF 5 executables and DWARF 4 objects of both.
* DWARF front end vs. libclang front end: names, kinds, sizes, alignments, field names and
  order, offsets, sizes, alignments, bit offsets and widths, access, anonymous-member
  grouping, bases (offset, size, virtual, empty) and vptr offsets are compared exactly; field
  type spellings loosely (without struct/class/union/enum keywords, scopes and spaces; the
  spellings of unnamed types are skipped, as the front ends write them differently).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from corpus_support import (
    C_RECORDS,
    CXX_RECORDS,
    LANGS,
    Build,
    LibclangCorpus,
    compare_with_compiler,
    corpus_of,
    loose_type,
)

from cachefit.cli.main import main
from cachefit.frontend.dwarf_records import list_records
from cachefit.model import Record

ELF_KINDS = ("exe-dwarf5", "obj-dwarf4")


def test_corpus_is_large_and_fully_listed(libclang_corpus: dict[str, LibclangCorpus]) -> None:
    assert len(C_RECORDS) + len(CXX_RECORDS) >= 40
    for lang in LANGS:
        names = {n for n, _ in corpus_of(lang)[2]}
        # Every record the file defines is tested (under its name or a typedef's).
        models = libclang_corpus[lang].models.values()
        covered = names | {r.name for r in models}
        missing = libclang_corpus[lang].defined - covered
        assert not missing, f"records of the {lang} corpus not in the test list: {missing}"


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("lang", LANGS)
def test_libclang_front_end_matches_compiler(lang: str, compiler: str,
                                             libclang_models: dict[str, dict[str, Record]],
                                             builds: dict[tuple[str, str], Build]) -> None:
    figures = builds[(compiler, lang)].figures
    bad: list[str] = []
    for i, (name, _) in enumerate(corpus_of(lang)[2]):
        bad += compare_with_compiler(libclang_models[lang][name].to_json(), figures[i])
    assert not bad, "\n".join(bad)


def _dwarf_records(build: Build, kind: str, cache: dict[Any, dict[str, Record]]
                   ) -> dict[str, Record]:
    key = (build.compiler, build.lang, kind)
    if key not in cache:
        elf = build.exe if kind == "exe-dwarf5" else build.obj4
        cache[key] = {r.name: r for r in list_records(str(elf))}
    return cache[key]


@pytest.fixture(scope="module")
def dwarf_cache() -> dict[Any, dict[str, Record]]:
    return {}


@pytest.mark.parametrize("kind", ELF_KINDS)
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("lang", LANGS)
def test_dwarf_front_end_matches_compiler(lang: str, compiler: str, kind: str,
                                          libclang_models: dict[str, dict[str, Record]],
                                          builds: dict[tuple[str, str], Build],
                                          dwarf_cache: dict[Any, dict[str, Record]]) -> None:
    build = builds[(compiler, lang)]
    records = _dwarf_records(build, kind, dwarf_cache)
    bad: list[str] = []
    for i, (name, _) in enumerate(corpus_of(lang)[2]):
        wanted = libclang_models[lang][name].name
        if wanted not in records:
            bad.append(f"{wanted}: not found in the DWARF")
            continue
        bad += compare_with_compiler(records[wanted].to_json(), build.figures[i])
    assert not bad, "\n".join(bad)


def _anonymous_groups(rec: Record) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for f in rec.fields:
        if f.anonymous_parent:
            groups.setdefault(f.anonymous_parent, []).append(f.name)
    return sorted(groups.values())


def compare_front_ends(dw: Record, lc: Record) -> list[str]:
    bad: list[str] = []

    def check(what: str, dwarf: object, clang: object) -> None:
        if dwarf != clang:
            bad.append(f"{lc.name}: {what}: DWARF {dwarf!r}, libclang {clang!r}")

    for attr in ("name", "kind", "size", "align", "vptr_offset"):
        check(attr, getattr(dw, attr), getattr(lc, attr))
    check("field names", [f.name for f in dw.fields], [f.name for f in lc.fields])
    for fd, fl in zip(dw.fields, lc.fields, strict=False):
        for attr in ("offset", "size", "align", "access", "bit_offset", "bit_size"):
            check(f"{fl.name}.{attr}", getattr(fd, attr), getattr(fl, attr))
        td, tl = loose_type(fd.type), loose_type(fl.type)
        if td is not None and tl is not None:
            check(f"{fl.name}.type (loosely)", fd.type, fl.type) if td != tl else None
    check("anonymous members", _anonymous_groups(dw), _anonymous_groups(lc))
    check("bases", sorted((b.name, b.offset, b.size, b.virtual, b.empty) for b in dw.bases),
          sorted((b.name, b.offset, b.size, b.virtual, b.empty) for b in lc.bases))
    return bad


@pytest.mark.parametrize("kind", ELF_KINDS)
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("lang", LANGS)
def test_dwarf_front_end_matches_libclang(lang: str, compiler: str, kind: str,
                                          libclang_models: dict[str, dict[str, Record]],
                                          builds: dict[tuple[str, str], Build],
                                          dwarf_cache: dict[Any, dict[str, Record]]) -> None:
    records = _dwarf_records(builds[(compiler, lang)], kind, dwarf_cache)
    bad: list[str] = []
    for name, _ in corpus_of(lang)[2]:
        lc = libclang_models[lang][name]
        if lc.name not in records:
            bad.append(f"{lc.name}: not found in the DWARF")
            continue
        bad += compare_front_ends(records[lc.name], lc)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", ["ns::fancy", "vec3_t", "packet", "ring<int,16>", "hidden"])
def test_cli_json_is_the_library_record(name: str, capsys: pytest.CaptureFixture[str],
                                        libclang_models: dict[str, dict[str, Record]]) -> None:
    lang = "c" if name in ("vec3_t", "packet") else "cxx"
    path, args, _ = corpus_of(lang)
    code = main(["show", name, str(path), "--json", "--", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    key = {"ring<int,16>": "ns::ring<int, 16>"}.get(name, name)
    assert json.loads(out) == libclang_models[lang][key].to_json()


# What the compiler probe cannot print, written down by hand: names, kinds, member lists,
# access, anonymous-member groups, empty bases.
EXPECTED: dict[tuple[str, str], dict[str, Any]] = {
    ("cxx", "ns::account"): {
        "kind": "class",
        "access": [("id", "private"), ("balance", "protected"), ("tag", "public"),
                   ("pin", "private"), ("code", "private"), ("weight", "private")],
        "groups": [["code", "weight"]]},
    ("cxx", "ns::priv_derived"): {"kind": "class", "access": [("q", "private")]},
    ("cxx", "ns::with_static"): {"access": [("x", "public")]},
    ("cxx", "ns::variant"): {"groups": [["i", "d", "lo", "hi"]]},
    ("cxx", "ns::ebo"): {"empty_bases": ["ns::empty_a", "ns::empty_b"]},
    ("cxx", "ns::counted<int>"): {"empty_bases": ["ns::empty_a"]},
    ("cxx", "ns::vb_diamond"): {"virtual_bases": ["ns::vb_root"]},
    ("cxx", "ns::vmore"): {"virtual_bases": ["ns::base_b", "ns::vplain"]},
    ("cxx", "ns::pod_t"): {"name": "ns::pod_t"},
    ("cxx", "hidden"): {"name": "(anonymous namespace)::hidden"},
    ("cxx", "ns::outer::inner"): {"name": "ns::outer::inner"},
    ("c", "packet"): {"groups": [["flags", "window"], ["sport", "dport", "ports"]],
                      "access": [("kind", "public"), ("sport", "public"), ("dport", "public"),
                                 ("ports", "public"), ("flags", "public"),
                                 ("window", "public"), ("pos", "public"),
                                 ("payload", "public")]},
    ("c", "bits_zero"): {"access": [(n, "public") for n in "abcde"]},
    ("c", "value"): {"kind": "union"},
    ("c", "vec3_t"): {"name": "vec3_t"},
    ("c", "list_head_t"): {"name": "list_head"},
}


def _spot_check(rec: Record, want: dict[str, Any]) -> None:
    if "kind" in want:
        assert rec.kind == want["kind"]
    if "name" in want:
        assert rec.name == want["name"]
    if "access" in want:
        assert [(f.name, f.access) for f in rec.fields] == want["access"]
    if "groups" in want:
        assert sorted(_anonymous_groups(rec)) == sorted(want["groups"])
    if "empty_bases" in want:
        assert sorted(b.name for b in rec.bases if b.empty) == want["empty_bases"]
    if "virtual_bases" in want:
        assert sorted(b.name for b in rec.bases if b.virtual) == want["virtual_bases"]


@pytest.mark.parametrize(("lang", "name"), list(EXPECTED))
def test_spot_checks(lang: str, name: str, libclang_models: dict[str, dict[str, Record]],
                     builds: dict[tuple[str, str], Build],
                     dwarf_cache: dict[Any, dict[str, Record]]) -> None:
    want = EXPECTED[(lang, name)]
    lc = libclang_models[lang][name]
    _spot_check(lc, want)
    for compiler in ("gcc", "clang"):
        for kind in ELF_KINDS:
            _spot_check(_dwarf_records(builds[(compiler, lang)], kind, dwarf_cache)[lc.name],
                        want)
