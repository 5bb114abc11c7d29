#!/usr/bin/env bash
# docs/examples/ping.c with 2 ranks: it exits 0 and rank 0 reports every value back and checked.
set -uo pipefail
run=$1
prog=$2
out=$("$run" -n 2 --timeout 60 "$prog" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "FAIL: mpigpurun -n 2 ping exited with status $rc" >&2; exit 1; }
grep -qE '^ping: 2 ranks, (GPU|host) buffers, ok$' <<<"$out" || { echo "FAIL: no ok line" >&2; exit 1; }
