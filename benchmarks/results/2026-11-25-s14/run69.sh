#!/usr/bin/env bash
# Session 14, device run 69 (one GPU): run 68 showed that while the resident copier polls, every
# host-side check of the default stream costs ~1.4 us under MPS (0.25 without it), and that a
# GPU-side fence (cuStreamWriteValue32) costs as much to enqueue. Does the copier's polling
# itself make those calls slow? The polling warp now sleeps MPIGPU_GPU_COPIER_POLL_NS after an
# empty look: the checks' cost and an 8-byte copy's for several gaps, then D->D latency under MPS
# with gaps 0 / 250 / 1000 ns, alternating (ABC CBA).
# It ran a temporary build (main at 095471a + the gap setting MPIGPU_GPU_COPIER_POLL_NS and
# stream_order_bench --copier GAPS): the gap changed nothing measurable, so neither was landed;
# this script cannot be rerun on a later main as it is.
set -u
source benchmarks/results/device-steps.sh
device_env
O=${OUT:-/tmp/out69}; mkdir -p "$O"
{ device_info; date -u; uptime; } >"$O/info.txt" 2>&1
part_g() {
  mps_start
  timeout 120 $B/stream_order_bench --copier 0,100,250,500,1000,2000 2>&1
  mps_stop
}
part_l() {
  mps_start
  for round in 1 2; do
    gaps="0 250 1000"; [ $round = 2 ] && gaps="1000 250 0"
    for g in $gaps; do
      echo "== round $round gap $g"
      env $MPS MPIGPU_GPU_COPIER_POLL_NS=$g timeout 60 $R $B/mpigpu-sweep latency D D -m 1:64K -i 1000 -x 100 2>&1 | grep -E "^[0-9]"
    done
  done
  mps_stop
}
for p in "$@"; do "part_$p" >"$O/part-$p.txt" 2>&1; done
