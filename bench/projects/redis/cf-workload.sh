#!/bin/sh
# The Redis workload of cachefit.toml: the build's redis-server on a Unix socket in the
# tree (no persistence), driven by the bundled redis-benchmark, then `shutdown nosave`, so
# the server exits normally and writes its trace. Run from the Redis source tree.
# One benchmark client (-c 1), so the commands reach the server in one order and two traces
# of one build give the same sequences (with the default 50 clients the interleaving, and
# so the dict states the commands meet, change from run to run).
# CF_REDIS_N: requests per test (default 20000); CF_REDIS_SERVER: the server to run
# (default src/redis-server; the clients are the tree's src/redis-cli, src/redis-benchmark).
set -eu
sock="$PWD/cf-redis.sock"
n=${CF_REDIS_N:-20000}
server=${CF_REDIS_SERVER:-src/redis-server}
rm -f "$sock"
"$server" --port 0 --unixsocket "$sock" --save '' --appendonly no \
  --daemonize no --logfile '' --loglevel warning &
pid=$!
i=0
until [ "$(src/redis-cli -s "$sock" ping 2>/dev/null)" = PONG ]; do
  i=$((i + 1)); [ $i -lt 300 ] || { kill "$pid"; exit 1; }; sleep 0.2
done
src/redis-benchmark -s "$sock" -q -c 1 -n "$n" -t set,get,incr,lpush,hset
src/redis-cli -s "$sock" shutdown nosave || true
wait "$pid"
