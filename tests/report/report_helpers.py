"""Helpers of the report tests (imported as `report_helpers`): a small C struct compiled
with -g, a hand-written profile of it with two object roles, and a layout plan.
Figures (object at a line start, 64-byte lines):

struct obj { long a; char pad1[56]; long b; char pad2[56]; long c; char pad3[56];
             long d; char pad4[56]; }                       a@0 b@64 c@128 d@192, 256 bytes

sequence 1, count 5: object 0 reads a, writes b; object 1 reads a, writes c, writes a
    traced layout: object 0 lines {0,1}, object 1 lines {0,2}      -> 4 lines, 3 dirty
    plan order a b pad1 c d pad2 pad3 pad4: a@0 b@8 c@72 d@80
                   object 0 lines {0},   object 1 lines {0,1}      -> 3 lines, 3 dirty
sequence 2, count 5: object 0 reads d                               -> 1 line before, 1 after
per invocation: lines 2.5 before, 2.0 with the plan; dirty 1.5 and 1.5.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TRACE_TESTS = Path(__file__).resolve().parents[1] / "trace"
if str(TRACE_TESTS) not in sys.path:  # trace_helpers: build and trace examples/ipc
    sys.path.append(str(TRACE_TESTS))

OBJ_C = """struct obj {
    long a;
    char pad1[56];
    long b;
    char pad2[56];
    long c;
    char pad3[56];
    long d;
    char pad4[56];
};
struct obj the_obj;
"""

PLANNED_C = """struct obj {
    long a;
    long b;
    char pad1[56];
    long c;
    long d;
    char pad2[56];
    char pad3[56];
    char pad4[56];
};
struct obj the_obj;
"""

PLAN_ORDER = ["a", "b", "pad1", "c", "d", "pad2", "pad3", "pad4"]
FIELDS = [("a", 0, 8), ("pad1", 8, 56), ("b", 64, 8), ("pad2", 72, 56), ("c", 128, 8),
          ("pad3", 136, 56), ("d", 192, 8), ("pad4", 200, 56)]


def profile_json(programs: list[str]) -> dict[str, object]:
    return {
        "format": "cachefit-profile", "version": 1, "cache_line": 64, "invocations": 10,
        "entry": ["work"], "programs": programs,
        "types": {
            "obj": {
                "size": 256,
                "fields": [{"name": n, "offset": o, "size": s} for n, o, s in FIELDS],
                "sequences": [
                    {"count": 5, "accesses": [[0, 0, 8, "r"], [0, 64, 8, "w"], [1, 0, 8, "r"],
                                              [1, 128, 8, "w"], [1, 0, 8, "w"]]},
                    {"count": 5, "accesses": [[0, 192, 8, "r"]]},
                ],
                "dropped": {"runaway": 0, "outside_objects": 0, "table_full": 0},
            },
            "other": {
                "size": 16,
                "fields": [{"name": "x", "offset": 0, "size": 8},
                           {"name": "y", "offset": 8, "size": 8}],
                "sequences": [{"count": 2, "accesses": [[0, 8, 8, "r"]]}],
                "dropped": {"runaway": 0, "outside_objects": 0, "table_full": 0},
            },
        },
    }


@dataclass
class ObjCase:
    directory: Path
    binary: Path            # traced layout, compiled with -g
    planned_binary: Path    # the plan's order, compiled with -g
    profile: Path           # names no program: the layout comes from --binary or the spans
    profile_with_program: Path
    plan: Path


def _compile(src: Path, out: Path) -> None:
    subprocess.run(["gcc", "-g", "-c", str(src), "-o", str(out)], check=True)


def make_obj_case(tmp_path: Path) -> ObjCase:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    (tmp_path / "obj.c").write_text(OBJ_C)
    (tmp_path / "planned.c").write_text(PLANNED_C)
    _compile(tmp_path / "obj.c", tmp_path / "obj.o")
    _compile(tmp_path / "planned.c", tmp_path / "planned.o")
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps(profile_json([])))
    prof2 = tmp_path / "prof-prog.json"
    prof2.write_text(json.dumps(profile_json([str(tmp_path / "obj.o")])))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format": "cachefit-layout-plan", "version": 1, "flatten": [],
                                "records": {"obj": {"order": PLAN_ORDER,
                                                    "expected_size": 256}}}))
    return ObjCase(tmp_path, tmp_path / "obj.o", tmp_path / "planned.o", prof, prof2, plan)
