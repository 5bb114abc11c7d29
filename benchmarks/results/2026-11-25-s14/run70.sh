#!/usr/bin/env bash
# Session 14, device run 70 (one GPU, two ranks on it): the fenced CUDA IPC pull (70cf65e: a
# device send waits for its default stream after its RTS went out; the receiver's copy waits for
# the sender's fence word). From the repository root with .device/bin (main at 70cf65e),
# .device/old (095471a, the commit before: mpigpurun, mpigpu-sweep, halo) and .device/mpich-gpu
# (tests/mpich/device_bundle.sh of 70cf65e) carried; logs to $OUT.
#   part t: GPU tests without MPS (the IPC variant: fences held on the host, copy engine)
#   part m: the same under a hand-started MPS daemon with default settings (the library detects
#           MPS and keeps the copier: fences waited for on the GPU), the sender killed inside
#           the window included (transport_stream_test)
#   part p: issue 20's targets, mpigpurun's defaults (it starts MPS): D->D latency 1 B-64 KiB and
#           bandwidth, old and new alternating (ABBA, 3 rounds), each row with staging's column
#   part h: halo --weak --mode all, old and new alternating (2 rounds)
#   part g: the MPICH GPU testlists under MPS (issue 19), as run 66
# 70cf65e was reverted (d70e786) after this run: its latency was worse. Parts p and h ran twice
# (run70-ph, then run70-ph2 after the fence poll's three loads were issued together).
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out70}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
tests() {
  gpu_tests device_copier_test transport_stream_test transport_test transport_faults_test \
    api_gpu_test api_p2p_test cuda_ipc_test
  echo "== transport_stream_ipc_test (MPIGPU_SHARED_GPU_IPC_MIN=0)"
  MPIGPU_SHARED_GPU_IPC_MIN=0 timeout 180 $B/transport_stream_ipc_test 2>&1 | grep -E "$GPU_TEST_LINES|fence|rank 1:"
  echo "== transport_stream_ring_test (MPIGPU_LMT=ring)"
  MPIGPU_LMT=ring timeout 180 $B/transport_stream_ring_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_stream_test, its fence lines"
  timeout 180 $B/transport_stream_test 2>&1 | grep -E "fence|rank 1:"
}
part_t() { tests 2>&1 | grep -vE "$SKIPS"; }
part_m() { mps_start; tests 2>&1 | grep -vE "$SKIPS"; mps_stop; }
part_p() {
  old_build
  ROUNDS=3 ab "lat-DD" "" latency D D -m 1:64K -i 1000 -x 100
  ROUNDS=2 ab "bw-DD" "" bw D D -m 256K:4M -i 40 -x 5
}
part_h() {
  old_build
  for round in 1 2; do
    for side in $([ $round = 1 ] && echo "OLD NEW" || echo "NEW OLD"); do
      echo "== round $round $side halo --weak --mode all"
      if [ $side = OLD ]; then timeout 150 $RO $O/halo --mode all --weak --type float --iters 100 2>&1 | grep -vE "^$"
      else timeout 150 $R $B/halo --mode all --weak --type float --iters 100 2>&1 | grep -vE "^$"; fi
    done
  done
}
part_g() {
  mps_start
  ln -sfn "$PWD/.device/mpich-gpu" /tmp/mpigpu-mpich-gpu
  env $MPS MPITEST_TIMEOUT_MULTIPLIER=0.15 LD_LIBRARY_PATH=/tmp/mpigpu-mpich-gpu/cudart:$LD_LIBRARY_PATH \
    timeout 400 tests/mpich/run.sh --gpu --prebuilt /tmp/mpigpu-mpich-gpu --timeout 400 \
    --out "$D/mpich-gpu" 2>&1 | tail -25
  mps_stop
  tar czf "$D/mpich-gpu.tgz" -C "$D" mpich-gpu && rm -rf "$D/mpich-gpu"
}
for p in "$@"; do "part_$p" >"$D/part-$p.txt" 2>&1; done
