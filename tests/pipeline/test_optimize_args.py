"""Optimize mode on the command lines real builds pass: response files, stdin, -x,
several sources at once, -E/-S, assembler sources, link-only commands; refusals exit 2
naming the source line; units outside the plan are compiled unchanged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from wrapper_helpers import (
    CACHEFIT,
    COMPILERS,
    MAKE_C_DECLARED,
    MAKE_C_PLAN,
    PROJECTS,
    cache_stats,
    copy_project,
    layout,
    needs_clang,
    needs_gcc,
    order_by_offset,
    run,
    wrapper_env,
)

PLAN = MAKE_C_PLAN
NEW_ORDER = PLAN["records"]["item"]["order"]
DECLARED = MAKE_C_DECLARED
SOURCES = ["main.c", "item.c", "list.c"]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return copy_project("make_c", tmp_path / "p")


def _env(tmp: Path, cc: str = "gcc", **extra: str) -> dict[str, str]:
    return wrapper_env(tmp, "optimize", CACHEFIT_CC=cc, **extra)


def _layout_of(prog: Path) -> list[str]:
    out = subprocess.run([str(prog), "--layout"], capture_output=True, text=True, check=True)
    return order_by_offset(layout(out.stdout))


@pytest.mark.parametrize("cc", COMPILERS)
def test_several_sources_compile_and_link_in_one_command(cc: str, project: Path,
                                                         tmp_path: Path) -> None:
    env = _env(tmp_path, cc)
    run([CACHEFIT, "cc", "-O1", *SOURCES, "-o", "prog"], project, env)
    run([cc, "-O1", *SOURCES, "-o", "plain"], project, env)
    assert _layout_of(project / "prog") == NEW_ORDER
    assert _layout_of(project / "plain") == DECLARED
    assert run(["./prog"], project, env).stdout == run(["./plain"], project, env).stdout
    # -c with several sources: one object each, named after the source
    run([CACHEFIT, "cc", "-O1", "-c", *SOURCES], project, env)
    assert all((project / s.replace(".c", ".o")).is_file() for s in SOURCES)
    run([CACHEFIT, "cc", "main.o", "item.o", "list.o", "-o", "linked"], project, env)
    assert _layout_of(project / "linked") == NEW_ORDER


@needs_gcc
def test_response_file(project: Path, tmp_path: Path) -> None:
    (project / "args.rsp").write_text("-O2 -Wall\n" + " ".join(SOURCES) + " -o 'rsp prog'\n")
    run([CACHEFIT, "cc", "@args.rsp"], project, _env(tmp_path))
    assert _layout_of(project / "rsp prog") == NEW_ORDER


@needs_gcc
def test_stdin_and_x_language(project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    run([CACHEFIT, "cc", "-c", "item.c", "list.c"], project, env)
    main = (project / "main.c").read_text()
    run([CACHEFIT, "cc", "-I", str(project), "-x", "c", "-c", "-", "-o", "main_stdin.o"],
        project, env, stdin=main)
    run([CACHEFIT, "cc", "main_stdin.o", "item.o", "list.o", "-o", "p1"], project, env)
    assert _layout_of(project / "p1") == NEW_ORDER
    (project / "main.txt").write_text(main)
    run([CACHEFIT, "cc", "-x", "c", "main.txt", "-x", "none", "item.o", "list.o", "-o", "p2"],
        project, env)
    assert _layout_of(project / "p2") == NEW_ORDER
    # stdin without a plan type: compiled as it is
    run([CACHEFIT, "cc", "-x", "c", "-c", "-", "-o", "plain_stdin.o"], project, env,
        stdin="int f(void) { return 7; }\n")
    assert (project / "plain_stdin.o").is_file()


@needs_gcc
def test_preprocess_assemble_and_assembler_sources(project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    pre = run([CACHEFIT, "cc", "-E", "item.c"], project, env).stdout
    assert pre == run(["gcc", "-E", "item.c"], project, env).stdout   # -E: the original
    deps = run([CACHEFIT, "cc", "-MM", "main.c"], project, env).stdout
    assert deps.split() == ["main.o:", "main.c", "item.h"]
    before = sorted(p.name for p in project.iterdir())
    run([CACHEFIT, "cc", "-fsyntax-only", "main.c", "item.c"], project, env)
    assert sorted(p.name for p in project.iterdir()) == before
    bad = run([CACHEFIT, "cc", "-c", "main.c", "item.c", "-o", "both.o"], project, env, ok=False)
    assert bad.returncode != 0 and "-o" in bad.stderr and not (project / "both.o").exists()
    run([CACHEFIT, "cc", "-O2", "-S", "item.c", "-o", "item.s"], project, env)
    run(["gcc", "-O2", "-S", "item.c", "-o", "plain.s"], project, env)
    assert (project / "item.s").read_text() != (project / "plain.s").read_text()
    run([CACHEFIT, "cc", "-c", "item.s", "main.c", "list.c"], project, env)
    run([CACHEFIT, "cc", "item.o", "main.o", "list.o", "-o", "from_asm"], project, env)
    run(["gcc", *SOURCES, "-o", "plain"], project, env)
    assert run(["./from_asm"], project, env).stdout == run(["./plain"], project, env).stdout
    assert _layout_of(project / "from_asm") == NEW_ORDER
    (project / "five.s").write_text(".globl five\nfive:\n\tmovl $5, %eax\n\tret\n")
    (project / "six.S").write_text("#define SIX 6\n.globl six\nsix:\n\tmovl $SIX, %eax\n"
                                   "\tret\n")
    run([CACHEFIT, "cc", "-c", "five.s", "six.S"], project, env)
    assert (project / "five.o").is_file() and (project / "six.o").is_file()


@needs_gcc
def test_units_dir_keeps_the_transformed_units(project: Path, tmp_path: Path) -> None:
    units = tmp_path / "units"
    env = _env(tmp_path, CACHEFIT_UNITS_DIR=str(units))
    run([CACHEFIT, "cc", "-c", "item.c", "-o", "item.o"], project, env)
    (unit,) = units.glob("item-*.i")
    meta = json.loads(unit.with_suffix(".json").read_text())
    assert meta["source"] == str(project / "item.c") and meta["language"] == "c"
    assert meta["args"][:2] == ["-x", "cpp-output"]
    text = unit.read_text()
    body = text[text.index("struct item {"):]
    assert body.index("*next;") < body.index("long id;") < body.index("char tag;")
    assert (project / "item.c").read_text() == (PROJECTS / "make_c" / "item.c").read_text()
    # a cache hit writes the same unit again
    for p in units.iterdir():
        p.unlink()
    run([CACHEFIT, "cc", "-c", "item.c", "-o", "item.o"], project, env)
    assert cache_stats(env, project)["hits"] == 1
    assert unit.read_text() == text and unit.with_suffix(".json").is_file()


@needs_gcc
def test_refusal_names_the_source_line(project: Path, tmp_path: Path) -> None:
    (project / "clear.c").write_text(
        '#include <string.h>\n#include "item.h"\n\n'
        "void item_clear(struct item *p) {\n"
        "    memset(&p->count, 0, sizeof(*p) - offsetof(struct item, count));\n}\n")
    proc = run([CACHEFIT, "cc", "-c", "clear.c", "-o", "clear.o"], project, _env(tmp_path),
               ok=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("cachefit: error: clear.c:5:"), proc.stderr
    assert "constraint" in lines[0] and not (project / "clear.o").exists()


@needs_gcc
def test_plan_errors_and_units_outside_the_plan(project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    proc = run([CACHEFIT, "cc", "-c", "item.c"], project,
               {**env, "CACHEFIT_CONFIG": str(tmp_path / "none.toml")}, ok=False)
    assert proc.returncode == 2 and "CACHEFIT_CONFIG" in proc.stderr
    (project / "cachefit.toml").write_text("[build]\n")
    proc = run([CACHEFIT, "cc", "-c", "item.c"], project, env, ok=False)
    assert proc.returncode == 2 and "CACHEFIT_LAYOUTS" in proc.stderr
    ghost = tmp_path / "ghost.json"
    ghost.write_text(json.dumps({"format": "cachefit-layout-plan", "version": 1,
                                 "records": {"ghost": {"order": ["a"]}}}))
    run([CACHEFIT, "cc", *SOURCES, "-o", "prog"], project,
        {**env, "CACHEFIT_LAYOUTS": str(ghost)})
    assert _layout_of(project / "prog") == DECLARED


@pytest.mark.parametrize("cc", COMPILERS)
def test_cxx_constructor_initialisers_follow_the_new_order(cc: str, tmp_path: Path) -> None:
    cxx = "g++" if cc == "gcc" else "clang++-19"
    (tmp_path / "rec.cc").write_text(
        "#include <cstdio>\n#include <cstddef>\n"
        "struct rec {\n    int a;\n    long b;\n    char c;\n"
        "    rec(int x) : a(x), b(x * 2L), c('z') {}\n};\n"
        "int main() {\n    rec r(21);\n"
        '    std::printf("%ld %zu %zu\\n", r.a + r.b + r.c, offsetof(rec, b), '
        "offsetof(rec, a));\n}\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format": "cachefit-layout-plan", "version": 1,
                                "records": {"rec": {"order": ["b", "c", "a"]}}}))
    env = wrapper_env(tmp_path, "optimize", CACHEFIT_CXX=cxx, CACHEFIT_LAYOUTS=str(plan))
    flags = ["-std=c++17", "-O2", "-Wall", "-Werror"]
    run([CACHEFIT, "c++", *flags, "rec.cc", "-o", "opt"], tmp_path, env)
    run([cxx, *flags, "rec.cc", "-o", "plain"], tmp_path, env)
    total, b_opt, a_opt = run(["./opt"], tmp_path, env).stdout.split()
    total_plain, b_plain, a_plain = run(["./plain"], tmp_path, env).stdout.split()
    assert total == total_plain
    assert int(b_opt) < int(a_opt) and int(a_plain) < int(b_plain)


@needs_gcc
def test_positional_initialisers_refused_or_fixed_as_the_plan_says(project: Path,
                                                                   tmp_path: Path) -> None:
    (project / "init.c").write_text(
        '#include <stdio.h>\n#include "item.h"\n\n'
        "static struct item g = {'q', 2.5, 7, 1, 99, 0};\n"
        'int main(void) { printf("%ld\\n", item_score(&g)); return 0; }\n')
    env = _env(tmp_path)
    proc = run([CACHEFIT, "cc", "init.c", "item.c", "-o", "init"], project, env, ok=False)
    assert proc.returncode == 2 and "init.c:4:" in proc.stderr and "position" in proc.stderr
    assert '"fix_initializers": true' in proc.stderr
    plan = json.loads((project / "plan.json").read_text())
    plan["fix_initializers"] = True
    (project / "fix.json").write_text(json.dumps(plan))
    run([CACHEFIT, "cc", "init.c", "item.c", "-o", "init"], project,
        {**env, "CACHEFIT_LAYOUTS": str(project / "fix.json")})
    run(["gcc", "init.c", "item.c", "-o", "plain"], project, env)
    assert run(["./init"], project, env).stdout == run(["./plain"], project, env).stdout


@pytest.mark.parametrize("mode", ["profile", "optimize"])
@pytest.mark.parametrize("cc", COMPILERS)
def test_units_compiled_unchanged_build_with_werror(cc: str, mode: str, project: Path,
                                                    tmp_path: Path) -> None:
    # Units the wrapper leaves alone (assembler sources; in optimize mode also C units the
    # plan does not touch) are compiled as given: no argument clang would warn about
    # (zstd's huf_decompress_amd64.S and every unplanned unit warned "'-x none' after last
    # input file has no effect", an error with -Werror).
    env = wrapper_env(tmp_path, mode, CACHEFIT_CC=cc)
    (project / "six.S").write_text(".globl six\nsix:\n\tmovl $6, %eax\n\tret\n")
    (project / "other.c").write_text("int other(int x) { return x + 1; }\n")
    for src in ("six.S", "other.c"):
        proc = run([CACHEFIT, "cc", "-Wall", "-Werror", "-c", src], project, env)
        assert proc.stderr == "", proc.stderr
    assert (project / "six.o").is_file() and (project / "other.o").is_file()


def _compiles_silently(project: Path, env: dict[str, str], source: str,
                       *warnings: str) -> None:
    """`cachefit cc -O2 WARNINGS -Werror -c SOURCE` succeeds with nothing on stderr."""
    proc = run([CACHEFIT, "cc", "-O2", *warnings, "-Werror", "-c", source], project, env)
    assert proc.stderr == "", proc.stderr
    assert (project / source).with_suffix(".o").is_file()


@needs_gcc
@pytest.mark.parametrize("mode", ["profile", "optimize"])
def test_fallthrough_comment_does_not_warn(mode: str, project: Path, tmp_path: Path) -> None:
    # gcc's -Wimplicit-fallthrough (in -Wextra) accepts a `/* FALLTHROUGH */` comment;
    # the transformed unit is compiled from preprocessed text, which has lost the comments,
    # so Lua 5.4.4's lgc.c (reallymarkobject) warned in both modes: an error with -Werror.
    env = wrapper_env(tmp_path, mode, CACHEFIT_CC="gcc")
    (project / "fall.c").write_text(
        '#include "item.h"\n'
        "long fall(struct item *it, int k) {\n"
        "  long r = 0;\n"
        "  switch (k) {\n"
        "    case 1: r += it->count;\n"
        "      /* FALLTHROUGH */\n"
        "    case 2: r += it->id; break;\n"
        "    default: break;\n"
        "  }\n"
        "  return r;\n"
        "}\n")
    _compiles_silently(project, env, "fall.c", "-Wall", "-Wextra")
    # the unit was transformed (compiled from preprocessed text), not from its source
    units = tmp_path / "units"
    run([CACHEFIT, "cc", "-O2", "-c", "fall.c", "-o", "fall2.o"], project,
        {**env, "CACHEFIT_UNITS_DIR": str(units)})
    assert list(units.glob("fall-*.i"))


@needs_clang
@pytest.mark.parametrize("mode", ["profile", "optimize"])
def test_clang_macro_parentheses_do_not_warn(mode: str, project: Path, tmp_path: Path) -> None:
    # clang leaves -Wparentheses-equality out inside macro expansions; the preprocessed
    # text has no macros, and Lua 5.4.4's `if (luai_numeq(a, b))` (`((a)==(b))`) warned
    # in both modes where the plain build does not: an error with -Werror.
    env = wrapper_env(tmp_path, mode, CACHEFIT_CC="clang-19")
    (project / "eq.c").write_text(
        '#include "item.h"\n'
        "#define numeq(a, b) ((a) == (b))\n"
        "int eq(struct item *it, long k) {\n"
        "  if (numeq(it->id, k)) return it->count;\n"
        "  return 0;\n"
        "}\n")
    _compiles_silently(project, env, "eq.c", "-Wall")


@needs_gcc
def test_records_with_other_fields_than_the_plan_keep_their_order(tmp_path: Path) -> None:
    # zstd's legacy decoder (lib/legacy/zstd_v05.c) declares a seqStore_t of its own, and
    # zstd's tests/Makefile builds lib/ without legacy support (ZSTD_DCtx lacks three
    # fields). The plan's order was applied by name and the build stopped ("the new order
    # does not list the fields ... give every field once"). Such a record is not the
    # planned one: it keeps its order, with a warning naming it.
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "rec.c").write_text(
        "#include <stddef.h>\n#include <stdio.h>\n"
        "struct rec {\n    char a;\n#ifdef LEGACY\n    long legacy;\n#endif\n"
        "    long b;\n    char c;\n};\n"
        "long get(struct rec *r) { return r->b + r->c; }\n"
        'int main(void) { printf("%zu %zu\\n", offsetof(struct rec, a), '
        "offsetof(struct rec, b)); return 0; }\n")
    (proj / "plan.json").write_text(json.dumps(
        {"format": "cachefit-layout-plan", "version": 1,
         "records": {"rec": {"order": ["b", "legacy", "a", "c"]}}}))
    (proj / "cachefit.toml").write_text('[build]\nlayouts = "plan.json"\n'
                                        '[trace]\ntypes = ["rec"]\nentry = ["get"]\n')
    env = _env(tmp_path)
    run([CACHEFIT, "cc", "-DLEGACY", "rec.c", "-o", "with"], proj, env)
    assert run(["./with"], proj, env).stdout.split() == ["16", "0"]
    proc = run([CACHEFIT, "cc", "rec.c", "-o", "without"], proj, env)
    assert run(["./without"], proj, env).stdout.split() == ["0", "8"]
    (line,) = [ln for ln in proc.stderr.splitlines() if "rec has other fields" in ln]
    assert "rec.c:4:" in line and "the order names legacy, which it does not declare" in line
    assert "compiled as declared" in line


@pytest.mark.parametrize("mode", ["optimize", "profile"])
@pytest.mark.parametrize("cc", COMPILERS)
def test_same_inputs_give_byte_identical_objects(cc: str, mode: str, project: Path,
                                                 tmp_path: Path) -> None:
    """Issue 29, case 7: clang named a transformed unit's compilation unit (DW_AT_name,
    the line table) after the wrapper's random temporary directory, so two builds of the
    same unit differed. Each compile runs in a temporary directory of its own."""
    (project / "sub").mkdir()
    (project / "sub" / "item.c").write_text((project / "item.c").read_text())
    env = wrapper_env(tmp_path, mode, CACHEFIT_CC=cc, CACHEFIT_CACHE="0")
    for out in ("one.o", "two.o"):
        run([CACHEFIT, "cc", "-g", "-O2", "-I.", "-c", "sub/item.c", "-o", out], project, env)
    one = (project / "one.o").read_bytes()
    assert one == (project / "two.o").read_bytes()
    assert b"cachefit-" not in one          # no temporary path anywhere
    info = subprocess.run(["readelf", "--debug-dump=info", "one.o"], cwd=project,
                          capture_output=True, text=True, check=True).stdout
    names = [line.split(": ")[-1] for line in info.splitlines() if "DW_AT_name" in line]
    assert names[0] == "sub/item.c"         # as the plain compile names it
