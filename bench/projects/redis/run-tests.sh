#!/usr/bin/env bash
# A subset of Redis's own tests (./runtest) on the programs of a built Redis tree: the data
# types (hash, list, string, incr, set, zset, stream), keys, expiry and SCAN, MULTI, the
# protocol and the client (networking, query buffers, CLIENT commands in introspection,
# client eviction, pub/sub, ACL, auth), INFO, other. Usage: run-tests.sh TREE. The tree's runtest, tests/ and src/redis-*
# programs are copied to a scratch directory; as root the tests run there as user nobody.
# CF_REDIS_UNITS=all runs every unit of runtest's default list instead.
# Prints runtest's summary, then one line "TOTAL: N ok, M err, K exception"; exit 1 on any.
set -euo pipefail
tree=$(cd "$1" && pwd)
units="unit/type/hash unit/type/list unit/type/list-2 unit/type/list-3 unit/type/string
unit/type/incr unit/type/set unit/type/zset unit/type/stream unit/keyspace unit/expire unit/scan
unit/multi unit/protocol unit/networking unit/querybuf unit/introspection unit/introspection-2
unit/client-eviction unit/pubsub unit/acl unit/auth unit/info-command unit/info unit/other"
scratch=$(mktemp -d)
cp -a "$tree/runtest" "$tree/tests" "$scratch/"
mkdir -p "$scratch/src"
for p in redis-server redis-cli redis-benchmark redis-check-aof redis-check-rdb redis-sentinel; do
  [ -e "$tree/src/$p" ] && cp -L "$tree/src/$p" "$scratch/src/"
done
as=()
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$scratch"
  as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
args=(--clients 2)
[ "${CF_REDIS_UNITS:-}" = all ] || for u in $units; do args+=(--single "$u"); done
cd "$scratch"
rc=0
"${as[@]}" env HOME="$scratch" ./runtest "${args[@]}" > "$scratch/runtest.log" 2>&1 || rc=$?
sed -i 's/\x1b\[[0-9;]*m//g' "$scratch/runtest.log"     # runtest's colours
grep -E '^\[(err|exception)\]|All tests passed|following tests failed' "$scratch/runtest.log" || true
ok=$(grep -c '^\[ok\]' "$scratch/runtest.log" || true)
err=$(grep -c '^\[err\]' "$scratch/runtest.log" || true)
exc=$(grep -c '^\[exception\]' "$scratch/runtest.log" || true)
echo "TOTAL: $ok ok, $err err, $exc exception (runtest exit $rc; log $scratch/runtest.log)"
[ "$rc" = 0 ] && [ "$err" = 0 ] && [ "$exc" = 0 ]
