#!/usr/bin/env bash
# Issue 20, first part (branch wt-mps): MPS when ranks share a GPU. Two ranks on one GPU.
# Build here, from the repository root:
#   ../shared/device-bundle //tools:mpigpurun //tools:mpigpu-info //tools:mpigpu-sweep \
#     //benchmarks:halo //tests:mps_rank //tests:launcher_probe //tests:launcher_mps_gpu_test \
#     //tests:launcher_mps_e2e_test //tests:mps_test //tests:transport_test //tests:api_gpu_test \
#     //tests:api_p2p_test //tests:transport_faults_test //tests:cuda_ipc_test
# then on the device, from the repository root:
#   bash benchmarks/results/2026-11-24-s11/mps-device.sh tests   # ~4 min
#   bash benchmarks/results/2026-11-24-s11/mps-device.sh perf    # ~4 min
# Logs go to $OUT (tests.txt, perf-*.txt, mps-procs.txt).
#
# tests: mpigpu-info's MPS lines without MPS and under a daemon started by hand (detection however
#   MPS was started); launcher_mps_gpu_test (mpigpurun's default starts a job-private daemon for 2
#   ranks on GPU 0, both ranks detect it and keep the copier + IPC path, nothing left after; --mps
#   off keeps the safe path); the fake-daemon launcher tests and mps_test as built; the GPU tests
#   under a daemon started by hand with default settings (no MPIGPU_GPU_COPIER_SHARED: the library's
#   own detection picks the fast path), transport_test's 4-rank stress among them; halo --check
#   under mpigpurun's default. After every step: no nvidia-cuda-mps process may be left.
# perf: D->D latency 1 B-4 KiB (and up to 1 MiB) and halo --weak, mpigpurun's default (MPS
#   started by it) vs --mps off, 3 alternating rounds; each line of the sweep carries its staging
#   and NCCL columns (measured under the same daemon).
set -u
. benchmarks/results/device-steps.sh
device_env
B=${MPS_BIN:-$B}  # where the binaries are (default .device/bin)
: "${OUT:=/tmp/mps-out}"; mkdir -p "$OUT"
RD="$B/mpigpurun -n 2 --bind-to core"            # default: --mps auto
ROFF="$B/mpigpurun -n 2 --bind-to core --mps off"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}  # both ranks on one GPU

# Runfiles for the e2e tests (they find mpigpurun, mps_rank, launcher_probe and the fake control
# program under TEST_SRCDIR/TEST_WORKSPACE).
runfiles() {
  local rf=$PWD/.device/rf/mpigpu
  mkdir -p $rf/tools $rf/tests/testdata
  case $B in /*) ;; *) B=$PWD/$B ;; esac
  ln -sf $B/mpigpurun $rf/tools/mpigpurun
  ln -sf $B/mps_rank $rf/tests/mps_rank
  ln -sf $B/launcher_probe $rf/tests/launcher_probe
  cp ${FAKE_MPS_SCRIPT:-tests/testdata/fake_mps_control.sh} $rf/tests/testdata/fake_mps_control.sh
  export TEST_SRCDIR=$PWD/.device/rf TEST_WORKSPACE=mpigpu
}

# Every nvidia-cuda-mps process of the machine, with what it is (none expected between steps).
mps_procs() { echo "== nvidia-cuda-mps processes after: $1"; pgrep -a nvidia-cuda-mps || echo "(none)"; }

case "${1:-tests}" in
tests)
  runfiles
  device_info > $OUT/env.txt 2>&1
  {
    echo "== mpigpu-info, no MPS"; $B/mpigpu-info | sed -n '/^MPS/,/^$/p'
    mps_start && echo "MPS started by hand ($CUDA_MPS_PIPE_DIRECTORY)"
    echo "== mpigpu-info, MPS started by hand"; $B/mpigpu-info | sed -n '/^MPS/,/^$/p'
    mps_stop; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; sleep 1
    mps_procs "mpigpu-info"
    echo "== launcher_mps_gpu_test"; timeout 120 $B/launcher_mps_gpu_test 2>&1 | grep -vE "^\[mpigpu [0-9]\] info: (ranks |joined)"
    mps_procs "launcher_mps_gpu_test"
    echo "== launcher_mps_gpu_test, MPIGPU_DEBUG lines"
    timeout 60 $RD --report-bindings env MPIGPU_DEBUG=info $B/mps_rank 2>&1 | grep -E "MPS|mps_rank|mpigpurun"
    mps_procs "mps_rank under the default"
    echo "== launcher_mps_e2e_test (fake daemon)"; timeout 120 $B/launcher_mps_e2e_test 2>&1 | grep -E "$GPU_TEST_LINES"
    echo "== mps_test"; timeout 60 $B/mps_test 2>&1 | grep -E "$GPU_TEST_LINES"
    mps_procs "fake-daemon tests"
    mps_start && echo "MPS started by hand, default settings (no MPIGPU_GPU_COPIER_SHARED)"
    gpu_tests transport_test transport_faults_test api_gpu_test api_p2p_test cuda_ipc_test
    mps_stop; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; sleep 1
    mps_procs "GPU tests under a hand-started daemon"
    echo "== halo check under mpigpurun's default"
    timeout 90 $RD $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
    mps_procs "halo"
  } 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt ;;
perf|perf-latency)
  {
    for round in 1 2 3; do
      for side in $([ $((round % 2)) = 1 ] && echo "MPS OFF" || echo "OFF MPS"); do
        L=$RD; [ $side = OFF ] && L=$ROFF
        echo "== round $round $side sweep latency D D 1:4K"
        timeout 120 $L $B/mpigpu-sweep latency D D -m 1:4K -i 2000 -x 200 2>&1 | grep -vE "^$"
        echo "== round $round $side sweep latency D D 8K:1M"
        timeout 120 $L $B/mpigpu-sweep latency D D -m 8K:1M -i 500 -x 50 2>&1 | grep -E "^[0-9]"
      done
    done
  } > $OUT/perf-latency.txt 2>&1
  mps_procs "latency" >> $OUT/mps-procs.txt
  [ "$1" = perf-latency ] && { echo done; exit 0; } ;&
perf-halo)
  {
    for round in 1 2 3; do
      for side in $([ $((round % 2)) = 1 ] && echo "MPS OFF" || echo "OFF MPS"); do
        L=$RD; [ $side = OFF ] && L=$ROFF
        echo "== round $round $side halo --weak --mode all"
        timeout 240 $L $B/halo --mode all --weak --type float --iters 100 2>&1 | grep -vE "^$"
      done
    done
  } > $OUT/perf-halo.txt 2>&1
  mps_procs "halo" >> $OUT/mps-procs.txt ;;
esac
echo done
