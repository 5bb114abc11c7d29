#!/usr/bin/env bash
# The fourth set: where the D->D latency difference between 941dc8c (gpu-bundle/old) and d105f89
# (gpu-bundle/bin) lives: the engine-level pingpong of both builds (no API, no sweep), and the
# new sweep without its limits and floors. ABBA rounds. Output in $OUT/out.tgz.
set -u
source benchmarks/device/steps.sh
device_env
old_build
D=/tmp/mpigpu-out; rm -rf "$D"; mkdir -p "$D"
{ device_info; date -u; cat "$B/COMMIT" "$O/COMMIT"; } >"$D/info.txt" 2>&1
pack() { tar czf "$OUT/out.tgz" -C "$D" .; }
trap pack EXIT
export CUDA_VISIBLE_DEVICES=0,1
for round in 1 2; do
  for side in $([ $round = 1 ] && echo "OLD NEW" || echo "NEW OLD"); do
    echo "== round $round $side pingpong D D"
    if [ $side = OLD ]; then timeout 30 $RO $O/pingpong D D 4096; else timeout 30 $R $B/pingpong D D 4096; fi
  done
done >"$D/pingpong-dd.txt" 2>&1
for round in 1 2; do
  echo "== round $round NEW sweep --no-limits"
  timeout 40 $R $B/mpigpu-sweep latency D D -m 1:4K -i 2000 -x 100 --no-peers --no-limits
done >"$D/sweep-nolimits.txt" 2>&1
echo done
