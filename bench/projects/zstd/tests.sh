#!/usr/bin/env bash
# zstd's own tests on the cachefit build (issue 30):  tests.sh SRC PLAN DATAGEN [SECONDS]
# SRC: the tree `cachefit build` ran in (programs/zstd is then its optimized build);
# PLAN: its out/cachefit/layout-plan.json; DATAGEN: tests/datagen of a plain build (no
# traced type in it). Runs, with their exit codes:
#   1. tests/playTests.sh (make test-zstd's script) on SRC's programs/zstd;
#   2. tests/zstreamtest built in optimize mode with PLAN through cachefit-cc (the library
#      compiled in, ZSTD_MULTITHREAD; DEBUGLEVEL=0 as in the CLI the plan was traced on: the
#      tests' default DEBUGLEVEL=2 makes ZSTD_pthread_mutex_t a pointer, another layout of
#      every record with a mutex), as make test-zstream runs it but SECONDS (default 30)
#      per run instead of 90: `-v` (unit tests, then fuzzing) and `--newapi -t1` (the
#      streaming API with random nbWorkers).
# Needs cachefit-cc on PATH (and PYTHONPATH/CACHEFIT_RUNTIME_DIR for an exported cachefit).
set -uo pipefail
only_zstream=${ONLY_ZSTREAM:-}   # set: skip playTests.sh
src=$(cd "$1" && pwd); plan=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); datagen=$3
secs=${4:-30}
cd "$src/tests"
t0=$SECONDS
[ -n "$only_zstream" ] || ZSTD_BIN="$src/programs/zstd" DATAGEN_BIN="$datagen" sh ./playTests.sh > playTests.log 2>&1
echo "playTests.sh: exit $? ($((SECONDS - t0)) s); tail: $(tail -1 playTests.log)"
rm -f zstreamtest ./*.o
CFLAGS="-O2 -g" CACHEFIT_MODE=optimize CACHEFIT_LAYOUTS="$plan" CACHEFIT_CC=clang-19 \
  make -s zstreamtest DEBUGLEVEL=0 CC=cachefit-cc > zstreamtest-build.log 2>&1
echo "zstreamtest optimize build: exit $?"
t0=$SECONDS
./zstreamtest -v -T${secs}s > zstreamtest-v.log 2>&1
echo "zstreamtest -v -T${secs}s: exit $? ($((SECONDS - t0)) s); $(tr '\r' '\n' < zstreamtest-v.log | grep -a -c ' OK') unit checks OK; tail: $(tr '\r' '\n' < zstreamtest-v.log | tail -1)"
t0=$SECONDS
./zstreamtest --newapi -t1 -T${secs}s > zstreamtest-newapi.log 2>&1
echo "zstreamtest --newapi -t1 -T${secs}s: exit $? ($((SECONDS - t0)) s); tail: $(tr '\r' '\n' < zstreamtest-newapi.log | tail -1)"
