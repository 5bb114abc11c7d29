#!/usr/bin/env bash
# Session 14, device run 71 (one GPU, two ranks on it): main after the fenced pull was reverted
# and the file splits merged (8a8d74f). From the repository root with .device/bin (that main) and
# .device/mpich-gpu (tests/mpich/device_bundle.sh of it) carried; logs to $OUT.
#   part t: GPU tests without MPS (the IPC variant: the CUDA IPC copy on the copy engine)
#   part m: the same under a hand-started MPS daemon with default settings (the library detects
#           MPS and keeps the copier and the IPC copy at every size)
#   part g: the MPICH GPU testlists under MPS (issue 19), as run 66
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out71}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
tests() {
  gpu_tests device_copier_test memcopy_test pipeline_gpu_test cuda_ipc_test transport_test \
    transport_faults_test transport_stream_test api_gpu_test api_gpu_coll_test \
    api_gpu_persistent_test api_p2p_test api_buffer_check_test
  echo "== mpi_gpu_test (2 ranks)"; timeout 120 $R $B/mpi_gpu_test 2>&1 | tail -3
  echo "== transport_stream_ipc_test (MPIGPU_SHARED_GPU_IPC_MIN=0)"
  MPIGPU_SHARED_GPU_IPC_MIN=0 timeout 180 $B/transport_stream_ipc_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_stream_ring_test (MPIGPU_LMT=ring)"
  MPIGPU_LMT=ring timeout 180 $B/transport_stream_ring_test 2>&1 | grep -E "$GPU_TEST_LINES"
}
part_t() { tests 2>&1 | grep -vE "$SKIPS"; }
part_m() { mps_start; tests 2>&1 | grep -vE "$SKIPS"; mps_stop; }
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
