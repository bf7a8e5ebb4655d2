"""`cachefit build --step retrace` (issue 26): the planned layout is profile-built (flattened
and reordered by the wrapper on the preprocessed units) and traced again; its measured lines
per invocation, per kind, equal the layout step's prediction when the objects' alignment is
the same in both runs, the retraced profile's field offsets are the plan's, and the profile
build's own files stay."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cachefit.frontend.dwarf_records import read_record
from cachefit.model.profile import load
from cachefit.model.project_config import parse_config
from cachefit.pipeline.pipeline_config import pipeline_config
from compiled_helpers import build_env

CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]

PROJECT = {
    "obj.h": """#ifndef OBJ_H
#define OBJ_H
struct obj {
    long cold_a[8];
    int hot_a;
    char pad1[60];
    int hot_b;
    long cold_b[8];
    int hot_c;
};
int op(struct obj *o, int k);
int peek(struct obj *o);
#endif
""",
    "op.c": """#include "obj.h"
int op(struct obj *o, int k) {
    if (o->hot_a == k) {
        o->hot_c++;
        return o->hot_b;
    }
    return 0;
}
int peek(struct obj *o) {
    return o->hot_a + (int)o->cold_a[1];
}
""",
    "main.c": """#include <stdio.h>
#include <stdlib.h>
#include "obj.h"
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    struct obj *o = malloc(sizeof *o);
    o->hot_a = 1; o->hot_b = 2; o->hot_c = 0; o->cold_a[1] = 3;
    long sum = 0;
    for (int r = 0; r < n; r++) {
        sum += op(o, r % 2);
        if (r % 4 == 0)
            sum += peek(o);
    }
    printf("sum=%ld count=%d\\n", sum, o->hot_c);
    free(o);
    return 0;
}
""",
    "Makefile": """CC ?= cc
CFLAGS ?= -O2 -g
prog: main.o op.o
\t$(CC) $(CFLAGS) -o $@ main.o op.o
%.o: %.c obj.h
\t$(CC) $(CFLAGS) -c -o $@ $<
clean:
\trm -f prog *.o
""",
    "cachefit.toml": """[trace]
types = ["obj"]
entry = ["op", "peek"]
[build]
cc = "gcc"
command = 'make -s CC="$CC"'
clean = "make -s clean"
workload = "./prog 200"
binaries = ["prog"]
output = "cf-out"
""",
}

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                               reason="needs gcc and make")


def _env(tmp: Path) -> dict[str, str]:
    return build_env(tmp)


def _cachefit(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CACHEFIT, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


def _project(tmp: Path) -> Path:
    project = tmp / "proj"
    project.mkdir()
    for name, text in PROJECT.items():
        (project / name).write_text(text)
    return project


@needs_gcc
def test_retrace_measures_the_predicted_figures(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = _env(tmp_path)
    out = project / "cf-out"
    proc = _cachefit(["build", "--step", "retrace"], project, env)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("cachefit: error: ") and "layout-plan.json: missing" in line
    assert "cachefit build --step layout" in line

    proc = _cachefit(["build", "--step", "profile", "--step", "trace", "--step", "layout",
                      "--step", "retrace"], project, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads((out / "layout-plan.json").read_text())
    order = plan["records"]["obj"]["order"]
    planned = json.loads((out / "layout" / "obj.json").read_text())["offsets"]

    # the profile build's files stay; the retrace has its own
    profiled = read_record(str(out / "profile" / "bin" / "prog"), "obj")
    assert [f.name for f in profiled.fields] != order
    retraced = read_record(str(out / "retrace" / "bin" / "prog"), "obj")
    assert [f.name for f in retraced.fields] == order
    assert retraced.size == plan["records"]["obj"]["expected_size"]
    assert list((out / "units" / "profile").glob("op-*.i"))
    (unit,) = (out / "units" / "retrace").glob("op-*.i")
    text = unit.read_text()
    assert text.index("hot_c;") < text.index("pad1[60]")      # reordered, not instrumented
    assert (out / "wrappers" / "retrace" / "cc").is_file()

    # the retraced profile's fields are at the plan's offsets; the objects (one malloc'd
    # block) at the same place in a line in both runs
    before, after = load(out / "profile.json"), load(out / "retrace" / "profile.json")
    assert {f.name: f.offset for f in after.types["obj"].fields} == planned
    assert before.types["obj"].alignment and \
        after.types["obj"].alignment == before.types["obj"].alignment

    summary = json.loads((out / "summary.json").read_text())
    (obj,) = summary["types"]
    assert obj["lines_measured"] == obj["lines_after"] < obj["lines_before"]
    assert obj["dirty_measured"] == obj["dirty_after"]
    kinds = {k["entry"]: k for k in obj["kinds"]}
    assert set(kinds) == {"op", "peek"}
    for k in kinds.values():
        assert k["lines_measured"] == k["lines_after"]
        assert k["dirty_measured"] == k["dirty_after"]
        assert k["measured_invocations"] == k["invocations"]
    assert kinds["op"]["lines_measured"] == 1.0 < kinds["op"]["lines_before"]
    stamp = json.loads((out / "steps" / "retrace.json").read_text())
    assert stamp["types"]["obj"]["layout_checked"] == "DWARF"
    md = (out / "summary.md").read_text()
    assert "measured after" in md and "| obj | op |" in md
    assert [s["step"] for s in summary["steps"]] == ["profile", "trace", "layout", "retrace"]

    # the build tree holds the retrace build: tracing it would profile the wrong code
    proc = _cachefit(["build", "--step", "trace"], project, env)
    assert proc.returncode == 2
    assert "the build tree holds the retrace build" in proc.stderr


def test_retrace_key_and_default_steps(tmp_path: Path) -> None:
    from cachefit.pipeline.pipeline import default_steps
    path = tmp_path / "cachefit.toml"
    path.write_text(PROJECT["cachefit.toml"])
    config = pipeline_config(parse_config(path.read_text(), path))
    assert "retrace" not in default_steps(config)
    path.write_text(PROJECT["cachefit.toml"] + "retrace = true\n")
    config = pipeline_config(parse_config(path.read_text(), path))
    assert default_steps(config) == ("profile", "trace", "layout", "retrace", "optimize",
                                     "report")
    path.write_text(PROJECT["cachefit.toml"] + "retrace = 1\n")
    with pytest.raises(Exception, match="retrace must be true or false"):
        pipeline_config(parse_config(path.read_text(), path))
