"""The DWARF front end's name lookup, errors, units and virtual-base offsets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from corpus_support import COMPILERS, CXX_RECORDS, Build, Figures, compare_with_compiler

from cachefit.errors import AmbiguousType, TypeNotFound, UserError
from cachefit.frontend import dwarf_records
from cachefit.frontend.dwarf_records import list_records, read_record
from cachefit.model import Record


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize(("wanted", "found"), [
    ("ring<int,16>", "ns::ring<int, 16>"),
    ("ns::ring<int, 16>", "ns::ring<int, 16>"),
    ("::ns::base_a", "ns::base_a"),
    ("inner", "ns::outer::inner"),
    ("outer::inner", "ns::outer::inner"),
    ("pod_t", "ns::pod_t"),
    ("hidden", "(anonymous namespace)::hidden"),
    ("node_base<ns::list_node>", "ns::node_base<ns::list_node>"),
])
def test_cxx_names(compiler: str, wanted: str, found: str,
                   builds: dict[tuple[str, str], Build]) -> None:
    assert read_record(str(builds[(compiler, "cxx")].exe), wanted).name == found


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_c_typedef_names(compiler: str, builds: dict[tuple[str, str], Build]) -> None:
    elf = str(builds[(compiler, "c")].obj4)
    assert read_record(elf, "list_head_t").name == "list_head"  # typedef of a named struct
    assert read_record(elf, "vec3_t").name == "vec3_t"  # typedef of an unnamed struct
    assert read_record(elf, "value").kind == "union"


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_fast_path_builds_the_same_record(compiler: str,
                                          builds: dict[tuple[str, str], Build]) -> None:
    elf = str(builds[(compiler, "cxx")].exe)
    everything = {r.name: r for r in list_records(elf)}
    for name in ("ns::vb_diamond", "ns::fancy", "ns::account", "ns::counted<int>"):
        assert read_record(elf, name).to_json() == everything[name].to_json()


def test_ambiguous_name_lists_qualified_names(builds: dict[tuple[str, str], Build]) -> None:
    with pytest.raises(AmbiguousType) as err:
        read_record(str(builds[("gcc", "cxx")].exe), "tcb")
    assert "'tcb' matches 2 records: kern::tcb, user::tcb" in err.value.render()


def test_unknown_name_suggests_close_names(builds: dict[tuple[str, str], Build]) -> None:
    with pytest.raises(TypeNotFound) as err:
        read_record(str(builds[("clang", "c")].exe), "plian")
    assert "did you mean: plain" in err.value.render()
    with pytest.raises(TypeNotFound) as err:
        read_record(str(builds[("gcc", "cxx")].exe), "ring<int, 32>")
    assert "ns::ring<double, 4>, ns::ring<int, 16>" in err.value.render()


@pytest.fixture(scope="module")
def two_units(build_dir: Path) -> Path:
    """An executable of two C units: `same` defined alike in both, `odr` differently."""
    a, b = build_dir / "unit_a.c", build_dir / "unit_b.c"
    a.write_text("struct same { int a; char b; };\nstruct odr { int x; };\n"
                 "struct same s1; struct odr o1;\n")
    b.write_text("struct same { int a; char b; };\nstruct odr { long x; char y; };\n"
                 "struct same s2; struct odr o2;\nint main(void) { return 0; }\n")
    exe = build_dir / "two_units"
    subprocess.run(["gcc", "-g", str(a), str(b), "-o", str(exe)], check=True)
    return exe


def test_identical_definitions_in_two_units_are_one_record(two_units: Path) -> None:
    names = [r.name for r in list_records(str(two_units))]
    assert names.count("same") == 1 and names.count("odr") == 2
    assert read_record(str(two_units), "same").size == 8


def test_different_definitions_of_one_name_are_ambiguous(two_units: Path) -> None:
    with pytest.raises(AmbiguousType) as err:
        read_record(str(two_units), "odr")
    text = err.value.render()
    assert "2 different definitions of odr" in text and "unit_a.c" in text and "unit_b.c" in text


def test_files_without_dwarf_or_not_elf_are_user_errors(build_dir: Path) -> None:
    src = build_dir / "nodebug.c"
    src.write_text("struct s { int a; };\nstruct s g;\n")
    obj = build_dir / "nodebug.o"
    subprocess.run(["gcc", "-c", str(src), "-o", str(obj)], check=True)
    with pytest.raises(UserError, match="has no DWARF debug information"):
        read_record(str(obj), "s")
    with pytest.raises(UserError, match="is not an ELF file"):
        read_record(str(src), "s")
    with pytest.raises(UserError, match="no such file"):
        list_records(str(build_dir / "missing.o"))


def _figures_by_name(build: Build) -> dict[str, Figures]:
    return {name: build.figures[i] for i, name in enumerate(CXX_RECORDS)}


def _cxx_mismatches(elf: Path, build: Build, lib: dict[str, Record]) -> list[str]:
    records = {r.name: r for r in list_records(str(elf))}
    figures = _figures_by_name(build)
    bad: list[str] = []
    for name in CXX_RECORDS:
        rec = records[lib[name].name]
        bad += compare_with_compiler(rec.to_json(), figures[name])
    return bad


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_virtual_bases_come_from_the_vtables(compiler: str, monkeypatch: pytest.MonkeyPatch,
                                             builds: dict[tuple[str, str], Build],
                                             libclang_models: dict[str, dict[str, Record]]
                                             ) -> None:
    """With the Itanium estimate disabled, every virtual base is still placed right: the
    offsets are read from the vtables of the executable and of the relocatable object."""
    def no_estimate(*_: object) -> None:
        raise AssertionError("estimated a virtual-base offset")

    monkeypatch.setattr(dwarf_records.DwarfReader, "_estimate_virtual_bases", no_estimate)
    build = builds[(compiler, "cxx")]
    for elf in (build.exe, build.obj4):
        assert not _cxx_mismatches(elf, build, libclang_models["cxx"])


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_estimated_virtual_bases_without_rtti(compiler: str, build_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              builds: dict[tuple[str, str], Build],
                                              libclang_models: dict[str, dict[str, Record]]
                                              ) -> None:
    """Without RTTI the vtables cannot be told apart, so the offsets are estimated; on the
    corpus's hierarchies the estimate is right."""
    estimated: list[str] = []
    original = dwarf_records.DwarfReader._estimate_virtual_bases

    def counting(self: dwarf_records.DwarfReader, die: object, vbases: list[object]) -> object:
        estimated.append(self.qualified_name(die))  # type: ignore[arg-type]
        return original(self, die, vbases)  # type: ignore[arg-type]

    monkeypatch.setattr(dwarf_records.DwarfReader, "_estimate_virtual_bases", counting)
    build = builds[(compiler, "cxx")]
    obj = build_dir / f"{compiler}-nortti.o"
    subprocess.run([COMPILERS[compiler]["cxx"], "-std=c++20", "-w", "-g", "-fno-rtti", "-c",
                    str(build_dir / "probe.cpp"), "-o", str(obj)], check=True)
    assert not _cxx_mismatches(obj, build, libclang_models["cxx"])
    assert {"ns::vb_diamond", "ns::impl", "ns::vmore"} <= set(estimated)


def test_class_only_declared_in_the_dwarf_is_an_error(build_dir: Path) -> None:
    """clang (without -fstandalone-debug) declares a class whose vtable is in another file
    instead of defining it; a record built on it cannot be laid out from this file."""
    src = build_dir / "keyfn.cpp"
    src.write_text("struct B { virtual void key(); long b; };\nstruct D : B { int d; };\nD g;\n")
    limited, full = build_dir / "keyfn.o", build_dir / "keyfn-full.o"
    subprocess.run(["clang++-19", "-g", "-c", str(src), "-o", str(limited)], check=True)
    subprocess.run(["clang++-19", "-g", "-fstandalone-debug", "-c", str(src), "-o", str(full)],
                   check=True)
    with pytest.raises(dwarf_records.IncompleteRecord, match="declares base class B of D"):
        read_record(str(limited), "D")
    with pytest.raises(TypeNotFound) as err:
        read_record(str(limited), "B")
    assert "only declares it; " in err.value.render() and "-fstandalone-debug" in err.value.render()
    assert list_records(str(limited)) == []
    d = read_record(str(full), "D")
    assert (d.size, d.vptr_offset, [(b.name, b.offset, b.size) for b in d.bases]) == \
        (24, 0, [("B", 0, 16)])
