#!/bin/sh
# The Redis workload of cachefit.toml: the build's redis-server on a Unix socket in the
# tree (no persistence), driven by the bundled redis-benchmark, then `shutdown nosave`, so
# the server exits normally and writes its trace. Run from the Redis source tree.
# CF_REDIS_N: requests per test (default 20000).
set -eu
sock="$PWD/cf-redis.sock"
n=${CF_REDIS_N:-20000}
rm -f "$sock"
src/redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
  --daemonize no --logfile '' --loglevel warning &
pid=$!
i=0
until [ "$(src/redis-cli -s "$sock" ping 2>/dev/null)" = PONG ]; do
  i=$((i + 1)); [ $i -lt 300 ] || { kill "$pid"; exit 1; }; sleep 0.2
done
src/redis-benchmark -s "$sock" -q -n "$n" -t set,get,incr,lpush,hset
src/redis-cli -s "$sock" shutdown nosave || true
wait "$pid"
