"""`cachefit show` user errors, from sources and from --binary: exit code 2, one message
naming what is wrong (closest names, the qualified candidates, the compiler's first error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_support import C_ARGS, C_FILE, CXX_ARGS, CXX_FILE, Build

from cachefit.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_unknown_type_prints_closest_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "plian", str(C_FILE), "--", *C_ARGS)
    assert code == 2 and out == ""
    assert err.startswith("cachefit: error: no record named 'plian' in ")
    assert "did you mean: plain" in err


@pytest.mark.parametrize("command", ["show", "reorder"])
def test_unknown_type_in_several_units_looks_at_all_of_them(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    """The closest names come from every unit searched, not the last one."""
    (tmp_path / "a.c").write_text("struct inflate_state { int mode; };\n"
                                  "struct inflate_state s;\n")
    (tmp_path / "b.c").write_text("struct gz_other { int fd; };\nstruct gz_other g;\n")
    extra = ["--order", "alphabetical"] if command == "reorder" else []
    code, out, err = run(capsys, command, "inflate_stat", str(tmp_path / "a.c"),
                         str(tmp_path / "b.c"), *extra, "--", "-std=c11")
    assert code == 2 and out == ""
    assert err == ("cachefit: error: no record named 'inflate_stat' in any of the 2 units; "
                   "did you mean: inflate_state\n")


def test_files_may_follow_the_options(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    """`show S -p DIR s.c` as well as `show S s.c -p DIR` (and flatten alike)."""
    (tmp_path / "s.c").write_text("struct S { int a; char b; };\nstruct S s;\n")
    (tmp_path / "compile_commands.json").write_text(
        f'[{{"directory": "{tmp_path}", "file": "{tmp_path / "s.c"}", '
        '"arguments": ["cc", "-c", "s.c"]}]')
    code, out, err = run(capsys, "show", "S", "-p", str(tmp_path), str(tmp_path / "s.c"))
    assert code == 0, err
    assert out.startswith("struct S {")
    code, out, err = run(capsys, "flatten", "S", "-p", str(tmp_path), str(tmp_path / "s.c"),
                         "--json")
    assert "unrecognized arguments" not in err


def test_name_in_two_scopes_lists_qualified_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "tcb", str(CXX_FILE), "--", *CXX_ARGS)
    assert code == 2 and out == ""
    assert "'tcb' matches 2 records: kern::tcb, user::tcb" in err
    assert "name one of them with its qualified name" in err


def test_file_that_does_not_parse_prints_compiler_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    bad = tmp_path / "broken.c"
    bad.write_text("struct ok { int a; };\nstruct t { undefined_t x; };\n")
    code, out, err = run(capsys, "show", "ok", str(bad))
    assert code == 2 and out == ""
    first = err.splitlines()[0]
    assert f"{bad}:2:12: {bad} does not compile: unknown type name 'undefined_t'" in first
    assert f"  {bad}:2:12: error: unknown type name 'undefined_t'" in err


def test_error_in_a_function_body_does_not_stop_show(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    """show reads declarations only (as pahole reads DWARF): an error in a body cannot
    change the layout, so the layout is printed with exit 0; reorder, which edits code and
    parses the bodies, refuses the unit. The README says so (issue 29, case 13: it said
    that any unit that does not compile is an error of show)."""
    src = tmp_path / "body.c"
    src.write_text("struct s { int a; char b; long c; };\n"
                   "int f(struct s *p) { return p->a + undefined_thing; }\n")
    code, out, err = run(capsys, "show", "s", str(src))
    assert code == 0 and err == ""
    assert "long c;" in out and "size: 16" in out
    code, out, err = run(capsys, "reorder", "s", str(src), "--order", "c,b,a", "--diff")
    assert code == 2 and out == ""
    assert err.startswith(f"cachefit: error: {src}:2:36: {src} does not compile: ")
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert "a unit whose declarations do not compile shows the compiler's first errors" \
        in readme
    assert "an error inside one (code only gcc accepts, a missing function) does not stop " \
        "`show`, which prints the layout with exit 0" in readme


def test_binary_unknown_type_prints_closest_names(builds: dict[tuple[str, str], Build],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    elf = builds[("gcc", "c")].exe
    code, out, err = run(capsys, "show", "plian", "--binary", str(elf))
    assert code == 2 and out == ""
    assert f"no record named 'plian' in {elf}; did you mean: plain" in err


def test_binary_name_in_two_scopes_lists_qualified_names(builds: dict[tuple[str, str], Build],
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    code, out, err = run(capsys, "show", "tcb", "--binary", str(builds[("clang", "cxx")].obj4))
    assert code == 2 and out == ""
    assert "'tcb' matches 2 records: kern::tcb, user::tcb" in err


def test_binary_that_is_not_elf(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "plain", "--binary", str(C_FILE))
    assert code == 2 and out == ""
    assert f"cachefit: error: {C_FILE} is not an ELF file" in err


def test_binary_shows_text_layout(builds: dict[tuple[str, str], Build],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "ring<int,16>", "--binary",
                         str(builds[("gcc", "cxx")].exe))
    assert code == 0, err
    assert out.startswith("struct ns::ring<int, 16> {")
    assert "cacheline 1 boundary (64 bytes)" in out and "size: 72, cachelines: 2" in out


@pytest.mark.parametrize("command", ["show", "reorder"])
def test_gcc_only_warning_options_print_nothing(capfd: pytest.CaptureFixture[str],
                                                tmp_path: Path, command: str) -> None:
    """A compilation database written by a gcc build has warning options clang does not
    know (-Wlogical-op, -Wnormalized=id); libclang must not print a warning about each
    of them for every unit parsed, and -Werror must not turn them into errors."""
    (tmp_path / "s.c").write_text("struct S { char c; long l; int i; };\nstruct S s;\n")
    (tmp_path / "compile_commands.json").write_text(
        f'[{{"directory": "{tmp_path}", "file": "{tmp_path / "s.c"}", '
        '"arguments": ["gcc", "-Wall", "-Werror", "-Wlogical-op", "-Wnormalized=id", '
        '"-c", "s.c"]}]')
    extra = ["--order", "l,i,c", "-o", str(tmp_path / "out.c")] if command == "reorder" else []
    code = main([command, "S", "-p", str(tmp_path), *extra])
    _out, err = capfd.readouterr()
    assert code == 0, err
    assert "unknown warning option" not in err


def test_show_on_a_werror_build_ignores_unused_warnings_of_skipped_bodies(
        capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """nginx 1.22.1 builds with `-W -Wall -Werror`: `cachefit show ngx_event_s -p .` said
    src/core/ngx_log.c "does not compile: unused function 'ngx_log_set_levels'", because
    show parses without function bodies, where static functions and variables used only
    in bodies look unused. The real compile (and reorder's parse) sees the bodies."""
    (tmp_path / "s.c").write_text(
        "struct S { char c; long l; };\n"
        "static int helper(void) { return 1; }\n"
        "static int counter;\n"
        "static const int limit = 3;\n"
        "int use(struct S *s) { return helper() + counter + limit + s->c; }\n")
    (tmp_path / "compile_commands.json").write_text(
        f'[{{"directory": "{tmp_path}", "file": "{tmp_path / "s.c"}", '
        '"arguments": ["cc", "-W", "-Wall", "-Wunused-const-variable", "-Werror", '
        '"-c", "s.c"]}]')
    code = main(["show", "S", "-p", str(tmp_path)])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "does not compile" not in err
    assert "struct S {" in out
