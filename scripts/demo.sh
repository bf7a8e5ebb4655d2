#!/usr/bin/env bash
# `make demo`: the main job on the bundled example. Until the pipeline issues land, it shows
# the layout of the example's thread control block as the compiler lays it out.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=.venv/bin/cachefit
mkdir -p out/demo
echo "== cachefit show tcb (hand-tuned flat tcb of examples/ipc)"
$cf show tcb examples/ipc/tcb_flat.h -- -std=c++17 | tee out/demo/tcb_flat.layout.txt
echo
echo "== cachefit show tcb (mixin hierarchy of examples/ipc)"
$cf show tcb examples/ipc/tcb_mixin.h -- -std=c++17 | tee out/demo/tcb_mixin.layout.txt
$cf show tcb examples/ipc/tcb_flat.h --json -- -std=c++17 > out/demo/tcb_flat.layout.json
echo
echo "cachefit: layouts written to out/demo/"
