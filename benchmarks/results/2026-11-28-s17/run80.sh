#!/usr/bin/env bash
# Session 17, device run 80 (one GPU, two ranks on it), the build of run 79: the chan LMT's
# device chunks over the other channels that carry it (the Unix-socket loopback channel; the
# shared-memory channel with MPIGPU_LMT=chan, whose 64 KiB cells keep 64 KiB frames), then
# pingpong over loopback TCP at 16 MiB under MPS, 2 rounds: H->H, D->D new, D->D with 256 KiB
# chunks (as run 79's "old").
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out80}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
OLD="MPIGPU_LMT_UNIT_GPU=256K MPIGPU_LMT_UNIT_GPU_MIN=256K"
part_c() {
  echo "== transport_test (MPIGPU_CHANNEL=socket)"
  MPIGPU_CHANNEL=socket timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|mismatch"
  echo "== transport_test (MPIGPU_LMT=chan)"
  MPIGPU_LMT=chan timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|mismatch"
}
part_p() {
  mps_start && echo "MPS started"
  for round in 1 2; do
    for v in $([ $round = 1 ] && echo "HH NEW OLD" || echo "OLD NEW HH"); do
      case $v in HH) k="H H"; e="";; NEW) k="D D"; e="";; OLD) k="D D"; e=$OLD;; esac
      echo "== round $round $v pingpong $k 16 MiB"
      env $MPS $e MPIGPU_SHM=0 timeout 60 $R $B/pingpong $k $((16 << 20)) 2>&1 | grep -E "^ *(1048576|4194304|16777216) "
    done
  done
  mps_stop
}
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
echo done
