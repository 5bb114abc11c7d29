#!/usr/bin/env bash
# Session 17, device run 79 (one GPU, two ranks on it): the chan LMT's device chunks sized like
# the ring's device units (ChanLmt::UnitFor: 512 KiB up to 1 MiB messages, then 1 MiB, the TCP
# frame's limit) instead of 256 KiB, and the transport_test fix for MPIGPU_SHARED_GPU_IPC_MIN=0.
# From the repository root with .device/bin carried (stripped -c opt builds); logs to $OUT.
#   part t: the TCP netmod's GPU tests (MPIGPU_SHM=0, as their Bazel targets set), no MPS
#   part m: the same under MPS; then over loopback TCP (MPIGPU_SHM=0, MPS) the sweep's bandwidth
#           series 1-64 MiB, 4 rounds, order rotated each round: H->H, D->D with the new chunks
#           (defaults), D->D with 256 KiB chunks as before (MPIGPU_LMT_UNIT_GPU=256K
#           MPIGPU_LMT_UNIT_GPU_MIN=256K: no shared-memory ring in these jobs, so only the chan
#           chunks change); then the halo over TCP with --check
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out79}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
tcp_tests() {
  echo "== tcp_datapath_test (MPIGPU_SHM=0 $*)"
  env "$@" MPIGPU_SHM=0 timeout 180 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES|mismatch"
  echo "== transport_test (MPIGPU_SHM=0 $*)"
  env "$@" MPIGPU_SHM=0 timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|mismatch"
}
part_t() { tcp_tests 2>&1 | grep -vE "$SKIPS"; }
OLD="MPIGPU_LMT_UNIT_GPU=256K MPIGPU_LMT_UNIT_GPU_MIN=256K"
sweep() {  # label env...
  local label=$1; shift
  echo "== round $round $label"
  env "$@" MPIGPU_SHM=0 timeout 60 $R $B/mpigpu-sweep bw $k -m 1M:64M -i 10 -x 2 2>&1 | grep -E "^[0-9]"
}
part_m() {
  mps_start && echo "MPS started"
  tcp_tests $MPS 2>&1 | grep -vE "$SKIPS"
  for round in 1 2 3 4; do
    for v in $(case $((round % 3)) in 1) echo "HH NEW OLD";; 2) echo "NEW OLD HH";; 0) echo "OLD HH NEW";; esac); do
      case $v in
        HH) k="H H"; sweep "H->H" $MPS ;;
        NEW) k="D D"; sweep "D->D new" $MPS ;;
        OLD) k="D D"; sweep "D->D old" $MPS $OLD ;;
      esac
    done
  done
  echo "== halo over TCP, GPU buffers (MPIGPU_SHM=0, MPS), --check"
  env $MPS MPIGPU_SHM=0 timeout 100 $R $B/halo --size 512,1024 --iters 200 --check 2>&1 | tail -12
  mps_stop
}
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
echo done
