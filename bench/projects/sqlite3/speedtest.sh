#!/bin/sh
# The cost of a traced run on SQLite's own benchmark, test/speedtest1.c (issues 26, 31):
# speedtest1 built plain (clang-19 -O2) and in profile mode by the cachefit of this
# checkout (or of $CACHEFIT_SRC), both linked with the amalgamation sqlite3.c, then run in
# turn `--memdb --size 50`; prints the CPU time (user + sys) of each run, the medians and
# their ratio, and the `cachefit trace` line of one traced run.
#   usage: speedtest.sh SQLITE_TREE OUT [ROUNDS]
# SQLITE_TREE: `apt-get source sqlite3` after `./configure && make sqlite3.c` (the
# amalgamation generated). EXTRA: lines appended to [trace] of the cachefit.toml written
# to OUT (e.g. 'deallocators = ["sqlite3DbFreeNN", "sqlite3DbNNFreeNN"]'). TYPES: the
# traced types as a TOML list (default '["Vdbe", "Mem", "BtCursor"]').
set -e
src=$1; out=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=${CACHEFIT_SRC:-$(cd "$here/../../.." && pwd)}
py=$repo/.venv/bin/python
mkdir -p "$out"; cd "$out"
cp "$src/sqlite3.c" "$src/sqlite3.h" "$src/test/speedtest1.c" .
FLAGS="-O2 -g -DSQLITE_THREADSAFE=1"
clang-19 $FLAGS -c sqlite3.c -o plain-sqlite3.o
clang-19 $FLAGS -c speedtest1.c -o plain-speedtest1.o
clang-19 -o st-plain plain-speedtest1.o plain-sqlite3.o -lm -ldl -lpthread
printf '[trace]\ntypes = %s\nentry = ["sqlite3_step"]\n%s\n' \
  "${TYPES:-[\"Vdbe\", \"Mem\", \"BtCursor\"]}" "${EXTRA:-}" > cachefit.toml
cfcc() {
  env PYTHONPATH="$repo/src" CACHEFIT_RUNTIME_DIR="$repo/runtime" CACHEFIT_MODE=profile \
    CACHEFIT_CC=clang-19 CACHEFIT_CONFIG="$PWD/cachefit.toml" CACHEFIT_UNITS_DIR="$PWD/units" \
    "$py" -m cachefit.cli.main cc "$@"
}
cfcc $FLAGS -c sqlite3.c -o prof-sqlite3.o
cfcc $FLAGS -c speedtest1.c -o prof-speedtest1.o
cfcc -o st-prof prof-speedtest1.o prof-sqlite3.o -lm -ldl -lpthread
mkdir -p raw
: > times.txt
for i in $(seq "$rounds"); do
  /usr/bin/time -a -o times.txt -f "plain %U %S" ./st-plain --memdb --size 50 >/dev/null
  rm -f raw/*
  CACHEFIT_TRACE_DIR=$PWD/raw /usr/bin/time -a -o times.txt -f "traced %U %S" \
    setarch -R ./st-prof --memdb --size 50 >/dev/null
done
"$py" - times.txt <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, user, system = line.split()
    runs.setdefault(name, []).append(round(float(user) + float(system), 2))
med = {k: statistics.median(v) for k, v in runs.items()}
print(f"plain {runs['plain']} traced {runs['traced']}: "
      f"medians {med['plain']} / {med['traced']} s, ratio {med['traced'] / med['plain']:.1f}x")
PY
rm -f raw/*
env PYTHONPATH="$repo/src" CACHEFIT_RUNTIME_DIR="$repo/runtime" /usr/bin/time \
  -f "cachefit trace: %U s user + %S s sys, %M KB peak" \
  "$py" -m cachefit.cli.main trace -o prof.json -- setarch -R ./st-prof --memdb --size 50 \
  >/dev/null
