"""Helpers for the flattening tests: compile and run a corpus case, compute the expected
size of the flat class from the compiler's layout of the original, read symbols."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import clang.cindex as ci

from cachefit.flatten import cx
from cachefit.flatten.api import find_class
from cachefit.flatten.layout import dump_target
from cachefit.frontend.clang_parse import parse_unit
from cachefit.model.type_names import unqualified_type_key

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
REPO = HERE.parent.parent
COMPILERS = ("g++", "clang++-19")


def case_spec(name: str) -> dict:
    spec = json.loads((CORPUS / name / "case.json").read_text())
    spec.setdefault("main", "main.cc")
    spec.setdefault("args", ["-std=c++17"])
    spec.setdefault("run_args", [])
    return spec


def positive_cases() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir()
                  if (p / "case.json").exists() and "error" not in case_spec(p.name))


def negative_cases() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir()
                  if (p / "case.json").exists() and "error" in case_spec(p.name))


def case_dir(name: str) -> Path:
    """The sources of a case: its corpus directory, or the directory its case.json names
    (relative to the repository), e.g. the bundled examples/ipc."""
    spec = case_spec(name)
    if "dir" in spec:
        return (REPO / spec["dir"]).resolve()
    return CORPUS / name


def copy_case(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build", "case.json", "*.o",
                                                            "*.ii", "*.exe"))
    return dst


def build(cxx: str, main: Path, args: list[str], out: Path) -> Path:
    flags = [a for a in args if a.startswith(("-std=", "-D", "-I"))]
    cmd = [cxx, "-O2", "-w", *flags, "-o", str(out), str(main)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=main.parent)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[:3000]}"
    return out


def run(exe: Path, run_args: list[str]) -> str:
    proc = subprocess.run([str(exe), *run_args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{exe} exited with {proc.returncode}: {proc.stderr[:500]}"
    return proc.stdout


def symbols(exe: Path) -> str:
    return subprocess.run(["nm", "-C", str(exe)], capture_output=True, text=True,
                          check=True).stdout


def has_vtable(exe: Path, cls: str) -> bool:
    return any(line.rstrip().endswith(f"vtable for {cls}") for line in symbols(exe).splitlines())


def _explicit_align(field: ci.Cursor) -> int:
    """The N of alignas(N) / aligned(N) on a field (libclang's attribute extent covers only
    the keyword, so read the tokens up to the declaration)."""
    best = 0
    tu = field.translation_unit
    for child in field.get_children():
        if child.kind == ci.CursorKind.ALIGNED_ATTR:
            start = child.extent.start
            end = field.extent.end
            rng = ci.SourceRange.from_locations(start, end)
            for tok in tu.get_tokens(extent=rng):
                if tok.spelling == ";":
                    break
                if tok.kind == ci.TokenKind.LITERAL and tok.spelling.isdigit():
                    best = max(best, int(tok.spelling))
                    break
    return best


def expected_flat_size(path: str, args: list[str], cls: str) -> tuple[int, int, int]:
    """(original sizeof, vtable pointers, sizeof of a plain struct holding the original's
    data members in the compiler's memory order) -- the size the flat class must have.

    Offsets of the base subobjects come from clang's record-layout dump, field offsets and
    sizes from libclang; shadowed base fields (redeclared by the class itself) are left out.
    """
    tu = parse_unit(path, args)
    decl = find_class(tu, cls, path)
    t = decl.type.get_canonical()
    layout = dump_target(path, args, unqualified_type_key(t.spelling))
    assert layout is not None
    own = {f.spelling for f in t.get_fields()}
    offsets: dict[str, int] = {}
    for s in layout.subobjects:
        offsets.setdefault(s.key, s.offset)
    fields: list[tuple[int, int, int]] = []   # (offset, size, align)

    def visit(rtype: ci.Type, base_offset: int, is_target: bool) -> None:
        for f in rtype.get_fields():
            if not is_target and f.spelling in own:
                continue
            size, align = f.type.get_size(), f.type.get_align()
            align = max(align, _explicit_align(f))
            fields.append((base_offset + f.get_field_offsetof() // 8, size, align))

    visit(t, 0, True)
    seen: set[str] = set()
    stack = [decl]
    while stack:
        d = stack.pop()
        for spec in d.get_children():
            if spec.kind != ci.CursorKind.CXX_BASE_SPECIFIER:
                continue
            bt = spec.type.get_canonical()
            key = unqualified_type_key(bt.spelling)
            if key in seen:
                continue
            seen.add(key)
            visit(bt, offsets[key], False)
            bdecl = bt.get_declaration()
            tmpl = cx.specialized_template(bdecl)
            stack.append(tmpl if tmpl is not None and not list(bdecl.get_children())
                         else bdecl)
    fields.sort()
    body = "".join(f"alignas({a}) unsigned char f{i}[{s}];" for i, (_, s, a) in
                   enumerate(fields))
    probe = f"struct cachefit_ref {{ {body} }};"
    ptu = parse_unit("ref.cc", ["-x", "c++", "-std=c++17"], unsaved=[("ref.cc", probe)])
    ref = next(c for c in ptu.cursor.get_children() if c.spelling == "cachefit_ref")
    return layout.size, layout.vptrs, ref.type.get_size()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[str(p)] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out
