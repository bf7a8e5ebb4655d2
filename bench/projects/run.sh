#!/usr/bin/env bash
# A real project through cachefit, as a user would run it (issue 32's C++ wave):
#   bench/projects/run.sh PROJECT [WORKDIR]
# PROJECT is a folder here holding cachefit.toml and project.env (the Debian source
# package, the build-system command that configures a plain tree for compile_commands.json,
# and the commands that build and run the project's own tests). Steps, each timed:
#   1. apt-get source into WORKDIR (default /tmp/cachefit-projects), cachefit build;
#   2. the project's own tests built in optimize mode with the plan, and run;
#   3. a re-trace: a copy of the pristine tree gets the plan's orders written into its
#      sources (cachefit reorder --order ... --in-place), is profile-built and traced
#      again; its "lines before" is the measured figure of the reordered layout.
# The figures go to WORKDIR/PROJECT/*.log and summary files; bench/projects/RESULTS.md
# records them. Needs root (apt-get) or the source already unpacked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
project=$1
work=${2:-/tmp/cachefit-projects}/$project
# shellcheck disable=SC1090
source "$here/$project/project.env"       # PACKAGE, DEB_DEPS, CONFIGURE_DB, TEST_BUILD, TEST_RUN, TYPES[, EXTRA_FILES]
export PATH="$repo/.venv/bin:$PATH"
mkdir -p "$work" && cd "$work"
if [ "$(id -u)" = 0 ]; then
  # deb-src entries for apt-get source, and the project's build dependencies
  sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true
  apt-get update -qq >/dev/null && apt-get install -y -qq $DEB_DEPS >/dev/null
fi
if [ ! -d src ]; then
  apt-get source -qq "$PACKAGE" >/dev/null 2>&1
  mv "$(find . -maxdepth 1 -mindepth 1 -type d -name "$PACKAGE*" | head -1)" src
  cp -a src pristine
fi
cp "$here/$project/cachefit.toml" src/
for f in ${EXTRA_FILES:-}; do cp "$here/$project/$f" src/; done   # e.g. a build script, a workload
t0=$SECONDS
(cd src && cachefit build > "$work/build.log" 2>&1)
echo "cachefit build: $((SECONDS - t0)) s"; sed -n '/^| type/,/^$/p' src/out/cachefit/summary.md
plan="$work/layout-plan.json"
cp src/out/cachefit/layout-plan.json "$plan"
t0=$SECONDS
(cd src && CACHEFIT_MODE=optimize CACHEFIT_LAYOUTS="$plan" CACHEFIT_CC=clang-19 \
   CACHEFIT_CXX=clang++-19 bash -c "$TEST_BUILD" > "$work/test-build.log" 2>&1)
(cd src && bash -c "$TEST_RUN" > "$work/tests.log" 2>&1) && rc=0 || rc=$?
echo "own tests on the reordered build: exit $rc ($((SECONDS - t0)) s)"; tail -3 "$work/tests.log"
rm -rf retrace && cp -a pristine retrace && cp "$here/$project/cachefit.toml" retrace/
for f in ${EXTRA_FILES:-}; do cp "$here/$project/$f" retrace/; done
(cd retrace && bash -c "$CONFIGURE_DB" > /dev/null 2>&1)
for t in $TYPES; do
  order=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['records'][sys.argv[2]]['order']))" "$plan" "$t")
  (cd retrace && cachefit reorder "$t" --order "$order" -p compile-db --in-place > "$work/retrace-reorder.log" 2>&1)
done
rm -rf retrace/compile-db
(cd retrace && cachefit build --step profile --step trace --step layout > "$work/retrace.log" 2>&1)
echo "re-trace of the reordered sources (lines before = measured):"
sed -n '/^| type/,/^$/p' retrace/out/cachefit/summary.md
