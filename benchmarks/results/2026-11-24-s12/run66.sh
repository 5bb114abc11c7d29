#!/usr/bin/env bash
# Session 12's device run (one GPU, 2026-11-24): the merged main's GPU paths, then the MPICH
# suite's GPU memory types under MPS. From the repository root, with .device/bin (bundle of main)
# and .device/mpich-gpu (tests/mpich/device_bundle.sh) carried; logs to $OUT.
#   part t: GPU tests of what changed this session (no MPS): intercommunicator and persistent
#           collectives on device buffers, the mpi.h buffer classification, mpi.h on device
#           pointers, the TCP netmod's device pairs (one connection per pair), transport_test
#   part m: under MPS: the same collectives on one shared GPU, then the MPICH GPU testlists
#   part p: under MPS: D->D ping-pong through mpi.h and mpigpu.h (one run, both interfaces)
set -u
source benchmarks/results/device-steps.sh
device_env
O=${OUT:-/tmp/out66}; mkdir -p "$O"
{ device_info; date -u; } >"$O/info.txt" 2>&1
part_t() {
  gpu_tests api_gpu_coll_test api_gpu_persistent_test mpi_buftype_test
  echo "== tcp_datapath_test (MPIGPU_SHM=0)"
  MPIGPU_SHM=0 timeout 180 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== mpi_gpu_test (2 ranks)"; timeout 120 $R $B/mpi_gpu_test 2>&1 | tail -3
}
part_m() {
  mps_start
  echo "== under MPS: api_gpu_coll_test, api_gpu_persistent_test"
  env $MPS timeout 180 $B/api_gpu_coll_test 2>&1 | grep -E "$GPU_TEST_LINES"
  env $MPS timeout 120 $B/api_gpu_persistent_test 2>&1 | grep -E "$GPU_TEST_LINES"
  ln -sfn "$PWD/.device/mpich-gpu" /tmp/mpigpu-mpich-gpu
  # The multiplier scales every limit: 400 s -> 60 s for the plain entries, the dtp entries'
  # timeLimit 600 s -> 90 s (a timeout is a failure in the table, as any other).
  env $MPS MPITEST_TIMEOUT_MULTIPLIER=0.15 LD_LIBRARY_PATH=/tmp/mpigpu-mpich-gpu/cudart:$LD_LIBRARY_PATH \
    timeout 330 tests/mpich/run.sh --gpu --prebuilt /tmp/mpigpu-mpich-gpu --timeout 400 \
    --out "$O/mpich-gpu" 2>&1 | tail -25
  mps_stop
  tar czf "$O/mpich-gpu.tgz" -C "$O" mpich-gpu && rm -rf "$O/mpich-gpu"  # $OUT holds 8 files
}
part_p() {
  mps_start
  env $MPS timeout 100 $R $B/mpi_overhead_bench pingpong --device --rounds 2 2>&1 | tail -30
  mps_stop
}
for p in "$@"; do "part_$p" >"$O/part-$p.txt" 2>&1; done
