"""The bundled examples/ipc ping-pong, built with its own Makefile through `cachefit c++`
and traced on `tcb`: sender and receiver roles, one sequence family per kind of IPC."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from trace_helpers import CACHEFIT, REPO, env_for, needs_clang, run

from cachefit.trace.profile_format import load

IPC = REPO / "examples" / "ipc"
pytestmark = [needs_clang, pytest.mark.skipif(not (IPC / "Makefile").is_file(),
                                              reason="examples/ipc is not there")]


def test_pingpong_profile(tmp_path: Path) -> None:
    (tmp_path / "cachefit.toml").write_text('[trace]\ntypes = ["tcb"]\nentry = ["ipc"]\n')
    env = env_for(tmp_path, CACHEFIT_MODE="profile", CACHEFIT_CXX="clang++-19",
                  CACHEFIT_CONFIG=str(tmp_path / "cachefit.toml"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    build = tmp_path / "build"
    run(["make", "-s", "-C", str(IPC), "CXX=cachefit c++", f"BUILD={build}",
         str(build / "pingpong-flat")], tmp_path, env)
    prog = build / "pingpong-flat"
    plain_env = env_for(tmp_path)
    out = run([str(prog), "-n", "300", "-r", "2"], tmp_path, plain_env).stdout
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    run([*CACHEFIT, "trace", "-o", "ipc.json", "--", str(prog), "-n", "300", "-r", "2"],
        tmp_path, plain_env)
    prof = load(tmp_path / "ipc.json")
    t = prof.types["tcb"]
    assert t.size == int(values["sizeof_tcb"]) == 560
    assert prof.invocations == int(values["ipcs"]) == t.counted
    assert t.runaway == 0
    # Every IPC touches two TCBs: role 0 is the first touched (the sender, except for a
    # receive-only IPC, where it is the calling receiver), role 1 the other.
    assert all(s.roles == 2 for s in t.sequences)
    counts = sorted((s.count for s in t.sequences), reverse=True)
    kinds = sorted((int(values[k]) for k in ("kind_call", "kind_send", "kind_blocked",
                                             "kind_recv")), reverse=True)
    # The four main paths are the four heaviest sequences; rare variants (time slice
    # expiry) are separate sequences of the same kinds.
    assert counts[0] <= kinds[0] and counts[0] > 0.9 * kinds[0]
    assert sum(counts) == sum(kinds)
    names = {f.offset: f.name for f in t.fields}
    call = t.sequences[0]
    first = call.accesses[0]
    assert (first.role, names[first.offset], first.mode) == (0, "thread_flags", "r")
    touched = {(a.role, names.get(a.offset), a.mode) for a in call.accesses}
    assert (1, "pdir_cache", "r") in touched           # the outlier in line 4
    assert (0, "saved_sp", "w") in touched and (1, "thread_state", "w") in touched
    show = run([*CACHEFIT, "profile", "show", "ipc.json", "--top", "4"], tmp_path,
               plain_env).stdout
    assert "pdir_cache" in show and "partner_tid" in show and "mr+8" in show
