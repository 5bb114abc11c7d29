#!/usr/bin/env bash
# Before/after in one run, alternated: callgrind instructions per message (msgcost) and the host
# ping-pong latency (pingpong H H, 2 ranks) of the base and head binaries.
set -u
msgcost_sh=$1; shift   # ../2026-11-24-default-stream-order-h200/msgcost.sh
rounds=${ROUNDS:-3}
for r in $(seq 1 $rounds); do
  for v in base head; do
    d=${BIN_DIR:-bin}-$v
    bash "$msgcost_sh" $d/msgcost | sed "s/^/msgcost $v round$r /"
    $d/mpigpurun -n 2 $d/pingpong H H 64 2>/dev/null | grep -E '^ *(1|64) ' | sed "s/^/pingpong $v round$r /"
  done
done
