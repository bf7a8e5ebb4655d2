#!/usr/bin/env python3
"""Where the instructions of a traced run go: callgrind's per-function counts, grouped.

Usage: callgrind_breakdown.py CALLGRIND_OUT [ENTRY_FUNCTION ...]
(make one with `CACHEFIT_TRACE_DIR=/tmp/x valgrind --tool=callgrind
--callgrind-out-file=OUT PROGRAM`). Groups: the runtime's per-access callbacks, the
invocation end (sequence hashing and lookup), the first touch of an object, invocation
begin/end, the instrumented entry functions named on the command line (whose own count
includes the inlined checks or the call set-up), and the rest of the program. It only
reads the file and prints; it never runs the program.
"""

from __future__ import annotations

import re
import subprocess
import sys

GROUPS = (
    ("per-access callbacks (runtime)", ("__sanitizer_cov", "__cachefit_access", "__tsan_")),
    ("invocation end: sequence lookup (cf_flush)", ("cf_flush", "memcmp", "cf_seq")),
    ("first touch of an object (cf_record_slow)", ("cf_record_slow", "cf_resolve",
                                                   "cf_lookup")),
    ("invocation begin/end", ("cf_enter", "cf_leave", "__cachefit_enter", "__cachefit_leave",
                              "cf_publish")),
)


def breakdown(path: str, entries: list[str]) -> tuple[int, dict[str, int]]:
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    groups: dict[str, int] = {}
    started = False
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S+)", line)
        if "PROGRAM TOTALS" in line and m:
            total = int(m.group(1).replace(",", ""))
            continue
        if "file:function" in line:
            started = True
            continue
        if not started or not m:
            continue
        n = int(m.group(1).replace(",", ""))
        fn = m.group(2).split(":")[-1]
        key = "rest of the program and libc"
        if fn in entries:
            key = f"{fn} (instrumented; includes inlined checks)"
        else:
            for name, prefixes in GROUPS:
                if any(p in fn for p in prefixes):
                    key = name
                    break
            else:
                if "/runtime/" in m.group(2):
                    key = "other runtime"
        groups[key] = groups.get(key, 0) + n
    return total, groups


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    total, groups = breakdown(sys.argv[1], sys.argv[2:])
    print(f"{sys.argv[1]}: {total:,} instructions")
    for k, v in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {v / 1e6:8.0f}M  {100 * v / total:5.1f}%  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
