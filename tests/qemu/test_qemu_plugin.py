"""The QEMU TCG plugin on small uninstrumented programs, traced in QEMU user mode.

Each test runs one scenario of progs.c (argv[1]) with `op`-like entry functions and checks
the profile: quadruples (role, offset, size, mode), roles in order of first touch, counts
of identical sequences, the phase, object areas, runaway cut-off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cachefit.model import profile as profile_format
from cachefit.trace.qemu_backend import trace_qemu

# op(p, q): p->a = 1; q->b = p->b + 2; q->d = 3   (struct obj: a@0 long, b@8, c@12, d@56)
OP_TWO = [[0, 0, 8, "w"], [0, 8, 4, "r"], [1, 8, 4, "w"], [1, 56, 8, "w"]]
OP_ONE = [[0, 0, 8, "w"], [0, 8, 4, "r"], [0, 8, 4, "w"], [0, 56, 8, "w"]]


def run(prog: Path, scenario: int, tmp_path: Path, **qemu: Any) -> dict[str, Any]:
    config = {"trace": {"types": ["obj"], "entry": qemu.pop("entry", "op"),
                        "qemu": {"overhead": False, **qemu}}}
    out = tmp_path / f"s{scenario}.profile.json"
    profile = trace_qemu([str(prog), str(scenario)], config, str(out))
    assert profile_format.load(out).to_json() == profile   # the readable form
    profile_format.load(out)  # valid for the other stages
    assert profile["backend"] == "qemu"
    assert profile["qemu"]["exit_status"] == 0
    return profile


def seqs(profile: dict[str, Any], type_name: str = "obj") -> list[tuple[int, list]]:
    return [(s["count"], s["accesses"]) for s in profile["types"][type_name]["sequences"]]


def test_two_objects_of_one_type_get_roles_0_and_1(progs, tmp_path):
    p = run(progs["static"], 1, tmp_path)
    assert p["invocations"] == 1
    assert seqs(p) == [(1, OP_TWO)]
    t = p["types"]["obj"]
    assert t["size"] == 64
    assert [(f["name"], f["offset"], f["size"]) for f in t["fields"]] == [
        ("a", 0, 8), ("b", 8, 4), ("c", 12, 4), ("pad", 16, 40), ("d", 56, 8)]
    assert t["dropped"]["runaway"] == 0 and t["dropped"]["outside_objects"] == 0
    # x, y, z found in DWARF as static objects of the type
    names = {o["name"] for o in p["qemu"]["objects"]}
    assert {"x", "y", "z"} <= names


def test_same_operation_on_other_objects_is_one_sequence_counted_twice(progs, tmp_path):
    p = run(progs["static"], 2, tmp_path)
    assert p["invocations"] == 2
    assert seqs(p) == [(2, OP_TWO)]


def test_phase_markers_exclude_what_runs_outside_the_phase(progs, tmp_path):
    p = run(progs["static"], 3, tmp_path, phase_start="phase_begin", phase_end="phase_done")
    # op(&x,&x), op(&y,&y) before the phase and op(&z,&z) after it would give OP_ONE
    assert p["invocations"] == 2
    assert seqs(p) == [(2, OP_TWO)]
    assert p["qemu"]["phase_reached"] == "ended"
    assert p["qemu"]["invocations_before_phase"] == 2
    # without the markers all five calls count
    whole = run(progs["static"], 3, tmp_path)
    assert whole["invocations"] == 5
    assert sorted(seqs(whole)) == sorted([(2, OP_TWO), (3, OP_ONE)])


def test_object_area_with_stride_larger_than_the_object(progs, tmp_path):
    area = {"type": "obj", "base": "arena", "stride": 256, "count": 4}
    p = run(progs["static"], 4, tmp_path, entry="op_block", area=[area])
    # op_block(p, q): q->c = 5; p->d = 4; ((char *)q)[128] = 7 (in q's block, not in q)
    assert p["invocations"] == 3
    assert sorted(seqs(p)) == sorted([
        (2, [[0, 12, 4, "w"], [1, 56, 8, "w"]]),   # (block 1, block 3) and (block 0, block 2)
        (1, [[0, 12, 4, "w"], [0, 56, 8, "w"]]),   # (block 2, block 2): one object
    ])
    assert p["types"]["obj"]["dropped"]["outside_objects"] == 3
    declared = [a for a in p["qemu"]["areas"] if a["source"] == "config"]
    assert [(a["stride"], a["count"]) for a in declared] == [(256, 4)]


def test_array_of_the_type_is_an_area(progs, tmp_path):
    p = run(progs["static"], 7, tmp_path)
    assert seqs(p) == [(2, OP_TWO)]
    areas = [a for a in p["qemu"]["areas"] if a["name"] == "table"]
    assert areas and areas[0]["stride"] == 64 and areas[0]["count"] == 4


def test_runaway_sequences_are_cut_off_and_counted(progs, tmp_path):
    p = run(progs["static"], 5, tmp_path, entry="many", max_accesses=5)
    assert p["invocations"] == 2
    assert seqs(p) == [(1, [[0, 12, 4, "w"], [0, 12, 4, "w"]])]
    assert p["types"]["obj"]["dropped"]["runaway"] == 1


def test_object_limit_and_sequence_table_limit(progs, tmp_path):
    # op(&x, &y) touches two objects: with max_objects = 1 the sequence is a runaway
    p = run(progs["static"], 1, tmp_path, max_objects=1)
    assert p["invocations"] == 1 and seqs(p) == []
    assert p["types"]["obj"]["dropped"]["runaway"] == 1
    # scenario 3 without markers: OP_ONE, OP_ONE, OP_TWO, OP_TWO, OP_ONE; one table slot
    p = run(progs["static"], 3, tmp_path, max_sequences=1)
    assert seqs(p) == [(3, OP_ONE)]
    assert p["types"]["obj"]["dropped"]["table_full"] == 2


def test_recursive_entry_is_one_invocation_per_outer_call(progs, tmp_path):
    p = run(progs["static"], 6, tmp_path, entry="rec")
    assert p["invocations"] == 2
    assert seqs(p) == [(2, [[0, 12, 4, "w"]] * 4 + [[0, 56, 8, "w"]] * 4)]


def test_position_independent_dynamic_program(progs, tmp_path):
    if "pie" not in progs:
        pytest.skip("cannot build a PIE test program")
    p = run(progs["pie"], 2, tmp_path)
    assert seqs(p) == [(2, OP_TWO)]


def test_i386_program_under_qemu_i386(progs, tmp_path):
    if "i386" not in progs:
        pytest.skip("gcc-multilib is not installed")
    import shutil
    if shutil.which("qemu-i386") is None:
        pytest.skip("qemu-i386 is not installed")
    p = run(progs["i386"], 2, tmp_path)
    off = {f["name"]: (f["offset"], f["size"]) for f in p["types"]["obj"]["fields"]}
    a, b, d = off["a"], off["b"], off["d"]
    assert a == (0, 4)  # long is 4 bytes on i386
    assert p["commands"][0][0].endswith("progs-i386")
    assert seqs(p) == [(2, [[0, a[0], 4, "w"], [0, b[0], 4, "r"], [1, b[0], 4, "w"],
                            [1, d[0], 4, "w"]])]


def test_overhead_is_measured_against_a_run_without_the_plugin(progs, tmp_path):
    config = {"trace": {"types": ["obj"], "entry": "op"}}
    out = tmp_path / "o.profile.json"
    p = trace_qemu([str(progs["static"]), "2"], config, str(out))
    ov = p["overhead"]
    assert ov["plain_seconds"] > 0 and ov["traced_seconds"] > 0
    assert p["qemu"]["slowdown"] is not None
    assert p["qemu"]["plain_exit_status"] == 0
    # CPU time of the QEMU process (from /proc), which a loaded machine disturbs less
    assert 0 < ov["plain_cpu_seconds"] <= ov["plain_seconds"] * os.cpu_count()
    assert 0 < ov["traced_cpu_seconds"] <= ov["traced_seconds"] * os.cpu_count()
    # (the figures in `overhead` are rounded to milliseconds; these runs last a few)
    assert p["qemu"]["slowdown_cpu"] == pytest.approx(
        ov["traced_cpu_seconds"] / ov["plain_cpu_seconds"], rel=0.2)


def test_system_mode_invocations_are_kernel_entries(minikernel, tmp_path):
    """qemu-system-i386: an invocation is a stay in the kernel code range."""
    config = {"trace": {"types": ["obj"], "qemu": {
        "kernel": str(minikernel), "kernel_range": ["__ktext_start", "__ktext_end"],
        "phase_start": "phase_begin", "phase_end": "phase_done", "overhead": False}}}
    out = tmp_path / "sys.profile.json"
    cmd = ["qemu-system-i386", "-display", "none", "-serial", "none", "-monitor", "none",
           "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
           "-kernel", str(minikernel)]
    p = trace_qemu(cmd, config, str(out))
    profile_format.load(out)
    # struct obj (i386): a@0 b@4 c@8 d@64; k_one(&x) before and k_one(&z) after the phase
    assert p["qemu"]["mode"] == "system"
    assert p["invocations"] == 3
    assert sorted(seqs(p)) == sorted([
        (2, [[0, 0, 4, "w"], [0, 4, 4, "r"], [1, 4, 4, "w"], [1, 64, 4, "w"]]),
        (1, [[0, 8, 4, "w"]]),
    ])
    assert p["qemu"]["invocations_before_phase"] == 1
