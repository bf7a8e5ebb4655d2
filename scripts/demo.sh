#!/usr/bin/env bash
# `make demo`: the whole pipeline on the bundled example, then the papers' table.
#
# 1. `cachefit build` in examples/ipc (examples/ipc/cachefit.toml): profile build of the mixin
#    tcb, flattened by the compiler wrapper; pingpong under `cachefit trace`; reorder; layout
#    plan; optimized build; report;
# 2. the table: cycles (rdtsc), instructions, D1 and LL misses (callgrind) per IPC for the
#    virtual hierarchy, flattened, hand-tuned flat, alphabetical and cachefit variants,
#    measured in the same run (examples/ipc/demo/ipc_demo.py, docs/demo-summary.md).
# Everything goes to out/demo/; the table also to out/demo/summary.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
mkdir -p out/demo
echo "== cachefit show tcb (the mixin hierarchy of examples/ipc, as the compiler lays it out)"
.venv/bin/cachefit show tcb examples/ipc/tcb_mixin.h -- -std=c++17 > out/demo/tcb_mixin.layout.txt
.venv/bin/cachefit show tcb examples/ipc/tcb_flat.h -- -std=c++17 > out/demo/tcb_flat.layout.txt
.venv/bin/cachefit show tcb examples/ipc/tcb_flat.h --json -- -std=c++17 > out/demo/tcb_flat.layout.json
head -3 out/demo/tcb_mixin.layout.txt
echo "   (full layouts: out/demo/tcb_mixin.layout.txt, out/demo/tcb_flat.layout.txt)"
exec nice "$py" examples/ipc/demo/ipc_demo.py --out out/demo "$@"
