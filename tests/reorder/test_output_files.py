"""Where `cachefit reorder` writes: through a symbolic link to the real header, new files
with the umask's mode, and nothing at all when one of the outputs cannot be written (an
error naming it, exit 2); running out of memory is a one-line error too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import snapshot

HEADER = "struct t {\n    long a;\n    long b;\n};\n"
USE = '#include "t.h"\nlong get_b(struct t *p) { return p->b; }\n'
MAIN = ('#include <stdio.h>\n#include "t.h"\nlong get_b(struct t *p);\n'
        'int main(void) { struct t x; x.a = 1; x.b = 2; '
        'printf("b=%ld\\n", get_b(&x)); return 0; }\n')


def _tree(tmp_path: Path) -> Path:
    """include/t.h, src/t.h -> ../include/t.h; src/use.c includes it through the link,
    include/main.c directly; a compilation database for both."""
    (tmp_path / "include").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "include" / "t.h").write_text(HEADER)
    (tmp_path / "src" / "t.h").symlink_to("../include/t.h")
    (tmp_path / "src" / "use.c").write_text(USE)
    (tmp_path / "include" / "main.c").write_text(MAIN)
    db = [{"directory": str(tmp_path / "src"), "file": str(tmp_path / "src" / "use.c"),
           "arguments": ["cc", "-c", "use.c"]},
          {"directory": str(tmp_path / "include"),
           "file": str(tmp_path / "include" / "main.c"),
           "arguments": ["cc", "-c", "main.c"]}]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    return tmp_path


def _run_program(tree: Path) -> str:
    subprocess.run(["cc", "-c", "use.c"], cwd=tree / "src", check=True)
    subprocess.run(["cc", "main.c", "../src/use.o", "-o", "../prog"], cwd=tree / "include",
                   check=True)
    return subprocess.run([tree / "prog"], capture_output=True, text=True,
                          check=True).stdout


def test_in_place_through_a_symbolic_link_rewrites_the_real_header(tmp_path: Path,
                                                                  cachefit,
                                                                  monkeypatch) -> None:
    tree = _tree(tmp_path)
    monkeypatch.chdir(tree)
    code, _out, err = cachefit("reorder", "t", "--order", "b,a", "-p", tree, "--in-place")
    assert code == 0, err
    link = tree / "src" / "t.h"
    assert link.is_symlink()
    assert (tree / "include" / "t.h").read_text().index("long b") < \
        (tree / "include" / "t.h").read_text().index("long a")
    assert _run_program(tree) == "b=2\n"


def test_an_output_that_cannot_be_written_writes_nothing(tmp_path: Path, cachefit) -> None:
    tree = _tree(tmp_path)
    sources = [tree / "include" / "t.h", tree / "src" / "use.c"]
    before = snapshot(sources)
    code, out, err = cachefit("reorder", "t", tree / "src" / "use.c", "--order", "b,a",
                              "--in-place", "--offsets-header", tree / "no" / "off.h")
    assert code == 2 and not out
    assert err.startswith(f"cachefit: error: cannot write {tree / 'no' / 'off.h'}")
    assert len(err.strip().splitlines()) == 1
    assert snapshot(sources) == before
    code, _out, err = cachefit("reorder", "t", tree / "src" / "use.c", "--order", "b,a",
                               "-o", tree)
    assert code == 2 and "it is a directory" in err
    assert snapshot(sources) == before


def test_new_outputs_get_the_mode_the_umask_allows(tmp_path: Path, cachefit) -> None:
    tree = _tree(tmp_path)
    old = os.umask(0o022)
    try:
        code, _out, err = cachefit("reorder", "t", tree / "src" / "use.c", "--order", "b,a",
                                   "-o", tree / "out.h", "--offsets-header", tree / "off.h")
    finally:
        os.umask(old)
    assert code == 0, err
    for name in ("out.h", "off.h"):
        assert ((tree / name).stat().st_mode & 0o777) == 0o644, name


@pytest.fixture(autouse=True)
def _cc() -> None:
    if subprocess.run(["sh", "-c", "command -v cc"], capture_output=True).returncode:
        pytest.skip("no C compiler")


def test_running_out_of_memory_is_a_one_line_error(tmp_path: Path, cachefit,
                                                   monkeypatch) -> None:
    from cachefit.cli import reorder_cmd

    def exhaust(_args: object) -> int:
        raise MemoryError

    monkeypatch.setattr(reorder_cmd, "run", exhaust)
    tree = _tree(tmp_path)
    code, out, err = cachefit("reorder", "t", tree / "src" / "use.c", "--order", "b,a")
    assert code == 1 and not out
    assert err == ("cachefit: error: cachefit reorder ran out of memory; give it more memory "
                   "or a smaller problem (fewer files, a smaller record)\n")
