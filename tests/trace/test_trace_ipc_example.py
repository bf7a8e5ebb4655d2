"""The bundled examples/ipc ping-pong, built with its own Makefile through `cachefit c++`
and traced on `tcb`: sender and receiver roles, one sequence family per kind of IPC."""

from __future__ import annotations

from pathlib import Path

from trace_helpers import (
    CACHEFIT,
    PINGPONG_ARGS,
    build_pingpong,
    env_for,
    needs_clang,
    needs_ipc,
    run,
    trace_pingpong,
)

from cachefit.model.profile import load

pytestmark = [needs_clang, needs_ipc]


def test_pingpong_profile(tmp_path: Path) -> None:
    prog = build_pingpong(tmp_path)
    out = run([str(prog), *PINGPONG_ARGS], tmp_path, env_for(tmp_path)).stdout
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    prof = load(trace_pingpong(tmp_path, prog))
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
               env_for(tmp_path)).stdout
    assert "pdir_cache" in show and "partner_tid" in show and "mr+8" in show
