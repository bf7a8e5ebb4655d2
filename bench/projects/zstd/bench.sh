#!/usr/bin/env bash
# zstd's own benchmark mode on two builds, interleaved (issue 30):
#   bench.sh PLAIN_ZSTD CACHEFIT_ZSTD INPUT [ROUNDS] [LEVELS]
# Each round runs `zstd -q -b<LEVELS> -T2 -i2 INPUT` with one binary, then the other (the
# order alternates between rounds). Prints each round's compression MB/s per level, then per
# level the medians and the ratio CACHEFIT/PLAIN (> 1: the cachefit build is faster).
set -euo pipefail
plain=$1; opt=$2; input=$3; rounds=${4:-7}; levels=${5:-1e3}
out=$(mktemp)
run() {  # build-name binary round
  "$2" -q -b"$levels" -T2 -i2 "$input" 2>&1 | awk -v b="$1" -v r="$3" \
    '/^-[0-9]+ / { print b, r, substr($1, 2), $4 }' >> "$out"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run plain "$plain" "$r"; run cachefit "$opt" "$r"
  else run cachefit "$opt" "$r"; run plain "$plain" "$r"; fi
done
echo "# build round level MB/s"; cat "$out"
python3 - "$out" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
levels = sorted({int(r[2]) for r in rows})
print("level  plain MB/s (median)  cachefit MB/s (median)  ratio cachefit/plain")
for lv in levels:
    med = {b: statistics.median(float(r[3]) for r in rows if r[0] == b and int(r[2]) == lv)
           for b in ("plain", "cachefit")}
    print(f"{lv:5d}  {med['plain']:19.2f}  {med['cachefit']:22.2f}  {med['cachefit'] / med['plain']:.3f}")
PY
rm -f "$out"
