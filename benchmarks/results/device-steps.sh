# Steps shared by the device-run scripts (source it from the repository root, on the device).
# Each run script keeps what is particular to its run; these are the parts every run repeats.
#   device_env         B=.device/bin, NCCL on LD_LIBRARY_PATH, NCCL_NVLS_ENABLE=0, R = 2-rank launcher
#   device_info        the GPUs, their links, the CPU count
#   gpu_tests T...     each test binary of .device/bin, its pass/fail/skip lines
#   transport_variants transport_test with the ring forced, and with tiny fastboxes + 2 cells

device_env() {
  B=.device/bin
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

transport_variants() {
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
}
