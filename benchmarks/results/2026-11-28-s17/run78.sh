#!/usr/bin/env bash
# Session 17, device run 78 (one GPU, two ranks on it): issue 17's device half on main as it
# stands (no library change since run 77). From the repository root with .device/bin carried
# (stripped -c opt builds of mpigpurun, mpigpu-sweep, pingpong, halo, tcp_datapath_test,
# transport_test); logs to $OUT.
#   part t: the TCP netmod's GPU tests (MPIGPU_SHM=0, as their Bazel targets set), no MPS
#   part m: the same under MPS, then D->D against H->H over loopback TCP (MPIGPU_SHM=0):
#           pingpong at 4/16/64 MiB and the sweep's bandwidth series 1-64 MiB, 5 rounds,
#           the order flipped each round; the halo over TCP with --check
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out78}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
tcp_tests() {
  echo "== tcp_datapath_test (MPIGPU_SHM=0)"
  env "$@" MPIGPU_SHM=0 timeout 180 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test (MPIGPU_SHM=0)"
  env "$@" MPIGPU_SHM=0 timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
}
part_t() { tcp_tests MPIGPU_DEBUG= 2>&1 | grep -vE "$SKIPS"; }
part_m() {
  mps_start && echo "MPS started"
  tcp_tests $MPS 2>&1 | grep -vE "$SKIPS"
  for round in 1 2 3 4 5; do
    for kind in $([ $((round % 2)) = 1 ] && echo "H:H D:D" || echo "D:D H:H"); do
      k="${kind/:/ }"
      for size in 4 16 64; do
        echo "== round $round tcp pingpong $k $size MiB (MPIGPU_SHM=0, MPS)"
        env $MPS MPIGPU_SHM=0 timeout 60 $R $B/pingpong $k $((size << 20)) 2>&1 | grep -vE "^#"
      done
      echo "== round $round tcp sweep bw $k (MPIGPU_SHM=0, MPS)"
      env $MPS MPIGPU_SHM=0 timeout 90 $R $B/mpigpu-sweep bw $k -m 1M:64M -i 10 -x 2 2>&1 | grep -E "^[0-9]"
    done
  done
  echo "== halo over TCP, GPU buffers (MPIGPU_SHM=0, MPS), --check"
  env $MPS MPIGPU_SHM=0 timeout 120 $R $B/halo --size 512,1024 --iters 200 --check 2>&1 | tail -12
  mps_stop
}
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
echo done
