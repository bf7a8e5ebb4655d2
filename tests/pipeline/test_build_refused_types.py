"""`cachefit build` with [trace] types of which the layout step must refuse some (issue 29,
case 9): a union, a packed struct and a struct whose bytes a `memset` reaches past its
members. Each is refused with its reason and location, the others are reordered and built,
and the summary names the refused types; only when every type is refused does the step
fail (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from wrapper_helpers import cachefit_in, write_project

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                                reason="needs gcc and make")

PROJECT = {
    "t.h": """struct item { long cold[8]; int hot; char pad[40]; int hot2; };
union u { int a; long b; };
struct __attribute__((packed)) pk { char c; int x; };
struct fam { int n; char tag; long data[]; };
int op(struct item *it, union u *v, struct pk *p, struct fam *f);
""",
    "op.c": """#include "t.h"
int op(struct item *it, union u *v, struct pk *p, struct fam *f) {
    return it->hot + it->hot2 + v->a + p->x + f->n;
}
""",
    "main.c": """#include <stdlib.h>
#include <string.h>
#include "t.h"
int main(void) {
    struct item *it = calloc(1, sizeof(struct item));
    union u *v = calloc(1, sizeof(union u));
    struct pk *p = calloc(1, sizeof(struct pk));
    struct fam *f = malloc(sizeof(struct fam) + 16);
    memset(f, 0, sizeof(struct fam) + 16);
    int s = 0;
    for (int i = 0; i < 50; i++)
        s += op(it, v, p, f);
    free(it); free(v); free(p); free(f);
    return s & 1;
}
""",
    "Makefile": """prog: main.o op.o
\t$(CC) -o $@ main.o op.o
%.o: %.c t.h
\t$(CC) -O1 -g -c -o $@ $<
""",
    "cachefit.toml": """[trace]
types = ["item", "u", "pk", "fam"]
entry = ["op"]
[build]
cc = "gcc"
command = 'make -s CC="$CC"'
clean = "rm -f prog *.o"
workload = "./prog"
binaries = ["prog"]
""",
}


def test_refused_types_are_listed_and_the_others_built(tmp_path: Path) -> None:
    project = write_project(PROJECT, tmp_path)
    proc = cachefit_in(["build"], project, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    out = project / "out" / "cachefit"
    plan = json.loads((out / "layout-plan.json").read_text())
    assert list(plan["records"]) == ["item"]
    summary = json.loads((out / "summary.json").read_text())
    types = {t["name"]: t for t in summary["types"]}
    assert types["item"]["refused"] is None and types["item"]["size_after_source"] == "DWARF"
    header, main = project / "t.h", project / "main.c"
    expected = {"u": f"{header}:2:7: u is a union",
                "pk": f"{header}:3:32: pk is packed",
                "fam": f"{main}:9:5: memset uses a byte range of fam"}
    for name, start in expected.items():
        assert types[name]["refused"].startswith(start), types[name]
        assert types[name]["size_after_source"] == "unchanged"
        assert types[name]["size_before"] == types[name]["size_after"]
        assert f"- {name}: {start}" in proc.stdout      # the table printed
        assert f"- {name}: {start}" in (out / "summary.md").read_text()
        assert f"| {name} | n/a |" in proc.stdout
    assert "u: refused; pk: refused; fam: refused" in proc.stderr

    # every type refused: nothing to build, the layout step fails with all the reasons
    only = project / "refusable.toml"
    only.write_text(PROJECT["cachefit.toml"].replace('"item", ', ""))
    proc = cachefit_in(["build", "--config", str(only), "--step", "layout", "-o", str(out)],
                     project, tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    error = [line for line in lines if line.startswith("cachefit: error: ")]
    assert error == [lines[-3]] and lines[-3].startswith(f"cachefit: error: {expected['u']}")
    assert lines[-2].startswith(f"  pk was refused too: {expected['pk']}")
    assert lines[-1].startswith(f"  fam was refused too: {expected['fam']}")
