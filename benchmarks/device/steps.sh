# Steps every GPU measurement repeats (sourced by measure.sh from the repository root, on the GPU
# machine, with the bundle of build.sh in gpu-bundle/).
#   device_env         B=gpu-bundle/bin, NCCL on LD_LIBRARY_PATH, NCCL_NVLS_ENABLE=0, R = 2-rank launcher
#   device_info        the GPUs, their links, the CPU count
#   gpu_tests T...     each test binary of gpu-bundle/bin, its pass/fail/skip lines
#   all_gpu_tests      every GPU test of a full check (2 ranks on one GPU)
#   transport_variants transport_test with the ring forced, and with tiny fastboxes + 2 cells
#   old_build          O=gpu-bundle/old (a build to compare with), RO = its 2-rank launcher
#   mps_start/mps_stop a private MPS daemon (/tmp/mps-pipe, /tmp/mps-log); MPS = the settings that
#                      exercise the IPC and copier paths on one GPU under it
#   ab LABEL ENV ARGS  mpigpu-sweep ARGS with ENV, old and new builds alternating, ROUNDS rounds
#                      (default 4; order flipped every round: ABBA)
#                      ("== round N OLD|NEW LABEL" headers, then the sweep's data lines)
#   SKIPS              the skip lines of tests that need what one GPU cannot give (filter them)

device_env() {
  B=gpu-bundle/bin
  NCCL_DIR=$(dirname "$(find /opt /usr -name libnccl.so.2 2>/dev/null | head -1)")
  export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:$NCCL_DIR:${LD_LIBRARY_PATH:-}
  R="$B/mpigpurun -n 2 --bind-to core"
}

device_info() {
  nvidia-smi -L; nvidia-smi topo -m | head -4; nproc; echo "NCCL: $NCCL_DIR"
}

GPU_TEST_LINES="^\[  (PASSED|FAILED|SKIPPED) |FAILED|rank check|want"

gpu_tests() {
  for t in "$@"; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
  done
}

all_gpu_tests() {
  gpu_tests device_copier_test memcopy_test pipeline_gpu_test cuda_ipc_test transport_test \
    transport_faults_test transport_stream_test api_gpu_test api_gpu_coll_test \
    api_gpu_persistent_test api_p2p_test api_buffer_check_test "$@"
  echo "== mpi_gpu_test (2 ranks)"; timeout 120 $R $B/mpi_gpu_test 2>&1 | tail -3
  echo "== transport_stream_ipc_test (MPIGPU_SHARED_GPU_IPC_MIN=0)"
  MPIGPU_SHARED_GPU_IPC_MIN=0 timeout 180 $B/transport_stream_ipc_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_stream_ring_test (MPIGPU_LMT=ring)"
  MPIGPU_LMT=ring timeout 180 $B/transport_stream_ring_test 2>&1 | grep -E "$GPU_TEST_LINES"
}

transport_variants() {
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
}

old_build() {
  O=gpu-bundle/old
  RO="$O/mpigpurun -n 2 --bind-to core"
}

MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"

mps_start() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  nvidia-cuda-mps-control -d
}

mps_stop() { echo quit | nvidia-cuda-mps-control; }

ab() {
  local label=$1 envs=$2 round side; shift 2
  for round in $(seq 1 "${ROUNDS:-4}"); do
    # ABBA: the order flips every round, so a drift of the machine favours neither build.
    for side in $([ $((round % 2)) = 1 ] && echo "OLD NEW" || echo "NEW OLD"); do
      echo "== round $round $side $label"
      if [ "$side" = OLD ]; then env $envs timeout 60 $RO $O/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
      else env $envs timeout 60 $R $B/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"; fi
    done
  done
}

SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
