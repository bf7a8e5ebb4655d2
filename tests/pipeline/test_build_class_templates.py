"""Class template instances as traced types, end to end on a tiny C++ program (issue 29,
case 12): `ring<int, 16>` and `ring<int,16>` are one type (one spelling, `ring<int,16>`,
in the profile, the trace check and the summary); the instance is traced with its layout,
`show`, `report` and `profile show` take either spelling; the layout step, `reorder` and
`flatten` refuse it at the template's definition (class templates are not rewritten)
while the plain struct next to it is reordered and built."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from wrapper_helpers import cachefit_in, write_project

pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None,
                                reason="needs g++ and make")

PROJECT = {
    "ring.hpp": """#pragma once
template <typename T, int N>
struct ring {
    T cold[N];
    long pad[8];
    int head;
    char name[48];
    int tail;
};
template <typename T>
struct counter { long cold[10]; T hits; char gap[64]; T misses; };
struct plain { long cold[8]; int hot; char pad[40]; int hot2; };
int op(ring<int, 16> *r, counter<int> *c, plain *p);
""",
    "op.cpp": """#include "ring.hpp"
int op(ring<int, 16> *r, counter<int> *c, plain *p) {
    r->head++;
    c->hits++;
    return r->head + r->tail + c->misses + p->hot + p->hot2;
}
""",
    "main.cpp": """#include "ring.hpp"
int main() {
    ring<int, 16> *r = new ring<int, 16>();
    counter<int> *c = new counter<int>();
    plain *p = new plain();
    int s = 0;
    for (int i = 0; i < 50; i++) s += op(r, c, p);
    delete r; delete c; delete p;
    return s == -1;
}
""",
    "Makefile": """prog: main.o op.o
\t$(CXX) -o $@ main.o op.o
%.o: %.cpp ring.hpp
\t$(CXX) -O1 -g -c -o $@ $<
""",
    "cachefit.toml": """[trace]
types = ["ring<int, 16>", "plain"]
entry = ["op"]
[build]
cxx = "g++"
command = 'make -s CXX="$CXX"'
clean = "rm -f prog *.o"
workload = "./prog"
binaries = ["prog"]
""",
}


def test_template_instances_one_spelling_end_to_end(tmp_path: Path) -> None:
    project = write_project(PROJECT, tmp_path)
    proc = cachefit_in(["build"], project, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = project / "out" / "cachefit"
    profile = json.loads((out / "profile.json").read_text())
    assert sorted(profile["types"]) == ["plain", "ring<int,16>"]    # not split at the space
    ring = profile["types"]["ring<int,16>"]
    assert ring["size"] == 184 and [f["name"] for f in ring["fields"]][-1] == "tail"
    assert ring["sequences"]
    plan = json.loads((out / "layout-plan.json").read_text())
    assert list(plan["records"]) == ["plain"]
    summary = json.loads((out / "summary.json").read_text())
    types = {t["name"]: t for t in summary["types"]}
    assert set(types) == {"plain", "ring<int,16>"}
    header = project / "ring.hpp"
    assert types["ring<int,16>"]["refused"].startswith(
        f"{header}:3:8: 'ring<int,16>' is an instance of the class template ring; "), types
    assert types["ring<int,16>"]["size_before"] == 184

    # the other commands take either spelling, and refuse what they cannot do at the
    # template's definition
    for spelled in ("ring<int, 16>", "ring<int,16>"):
        shown = cachefit_in(["show", spelled, "op.cpp"], project, tmp_path)
        assert shown.returncode == 0 and "tail" in shown.stdout, shown.stderr
        for cmd in (["report", str(out / "profile.json"), "--type", spelled],
                    ["profile", "show", str(out / "profile.json"), "--type", spelled]):
            done = cachefit_in(cmd, project, tmp_path)
            assert done.returncode == 0 and "ring<int,16>" in done.stdout, done.stderr
        refused = cachefit_in(["reorder", spelled, "op.cpp", "--profile",
                             str(out / "profile.json")], project, tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.startswith(f"cachefit: error: {header}:3:8: '{spelled}' is an "
                                         "instance of the class template ring"), refused.stderr
    flat = cachefit_in(["flatten", "counter<int>", "op.cpp"], project, tmp_path)
    assert flat.returncode == 2
    assert flat.stderr.strip() == (f"cachefit: error: {header}:11:8: 'counter<int>' is an "
                                   "instance of the class template counter; flatten a "
                                   "non-template class"), flat.stderr
    assert "Traceback" not in proc.stderr + flat.stderr
