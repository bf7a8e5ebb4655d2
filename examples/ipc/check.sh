#!/bin/sh
# check.sh ARGS BINARY... - run every pingpong binary with ARGS and verify that
# they all report the same checksum, state_checksum, ipcs and kind_* counts.
set -u
args=$1
shift
[ $# -ge 1 ] || { echo "usage: $0 ARGS BINARY..." >&2; exit 2; }
ref=""
refbin=""
status=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for bin in "$@"; do
    # shellcheck disable=SC2086
    if ! "$bin" $args >"$tmp"; then
        echo "FAIL: $bin $args exited with status $?" >&2
        status=1
        continue
    fi
    key=$(grep -E '^(checksum|state_checksum|ipcs|kind_[a-z_]+)=' "$tmp" | sort | tr '\n' ' ')
    get() { sed -n "s/^$1=//p" "$tmp"; }
    printf '%-40s variant=%-6s sizeof_tcb=%-4s ipc_cycles_median=%-8s checksum=%s state=%s\n' \
        "$bin" "$(get variant)" "$(get sizeof_tcb)" "$(get ipc_cycles_median)" \
        "$(get checksum)" "$(get state_checksum)"
    if [ -z "$ref" ]; then
        ref=$key
        refbin=$bin
    elif [ "$key" != "$ref" ]; then
        echo "FAIL: $bin differs from $refbin:" >&2
        echo "  $refbin: $ref" >&2
        echo "  $bin: $key" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "check: OK, $# binaries agree ($args)"
exit $status
