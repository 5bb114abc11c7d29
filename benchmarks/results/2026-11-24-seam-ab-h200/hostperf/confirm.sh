#!/usr/bin/env bash
# the transport seam's host A/B again, on the GPU machine, built as `2026-11-24-tcp-datapath-h100/a`.sh expects (gpu-bundle/bin = the build
# to test, gpu-bundle/old = the pre-seam build 7eddb37): `2026-11-24-tcp-datapath-h100/a`'s two host commands, 8 rounds each,
# old and new alternating with the order flipped every round (ABBA: a drift of the machine over
# the run then favours neither build), then per-size medians, ranges and a Mann-Whitney p.
#   bash benchmarks/results/2026-11-24-seam-ab-h200/hostperf/confirm.sh   (from the repository root; ROUNDS=8)
set -u
. benchmarks/device/steps.sh
device_env
old_build
HERE=benchmarks/results/2026-11-24-seam-ab-h200/hostperf
one() {  # side label args...
  local side=$1 label=$2; shift 2
  echo "== round $round $side $label"
  if [ "$side" = OLD ]; then timeout 90 $RO $O/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
  else timeout 90 $R $B/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"; fi
}
for round in $(seq 1 "${ROUNDS:-8}"); do
  order="OLD NEW"; [ $((round % 2)) = 0 ] && order="NEW OLD"
  for side in $order; do one $side host-lat-HH latency H H -m 1:64K -i 500 -x 50; done
  for side in $order; do one $side host-bw-HH bw H H -m 64K:16M -i 30 -x 5; done
done > $OUT/host-ab.txt 2>&1
python3 $HERE/ab_median.py $OUT/host-ab.txt | tee $OUT/host-ab-medians.txt
