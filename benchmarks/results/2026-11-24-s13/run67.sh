#!/usr/bin/env bash
# Session 13's device run (one GPU, 2026-11-24/25): the GPU paths this session changed or had not
# run yet, then the mpi.h/mpigpu.h ping-pongs. From the repository root with .device/bin carried
# (bundle of main); logs to $OUT.
#   part t (no MPS): send cancellation of device sends (api_gpu_test, whole), the dma-buf export
#          (ib_dmabuf_gpu_test), the mpi.h buffer lookup after the inline fast path
#          (mpi_buftype_test), the pin cache after the exclusive-pages rule (pin_cache_gpu_test),
#          neighborhood collectives on device buffers (api_gpu_coll_test, that test),
#          transport_test, mpi.h on device pointers (mpi_gpu_test, 2 ranks)
#   part p: host ping-pong through mpi.h and mpigpu.h (no MPS; issue 19's host item), then D->D
#          under MPS (both interfaces, one run)
set -u
source benchmarks/results/device-steps.sh
device_env
O=${OUT:-/tmp/out67}; mkdir -p "$O"
{ device_info; date -u; uptime; } >"$O/info.txt" 2>&1
part_t() {
  gpu_tests api_gpu_test transport_test ib_dmabuf_gpu_test mpi_buftype_test
  echo "== pin_cache_gpu_test (MPIGPU_PIN_CACHE=1), pin_cache_off_gpu_test (=0)"
  MPIGPU_PIN_CACHE=1 timeout 120 $B/pin_cache_gpu_test 2>&1 | grep -E "$GPU_TEST_LINES"
  MPIGPU_PIN_CACHE=0 timeout 60 $B/pin_cache_off_gpu_test --gtest_filter='*OffSwitch*' 2>&1 |
    grep -E "$GPU_TEST_LINES"
  echo "== api_gpu_coll_test (neighborhood)"
  timeout 120 $B/api_gpu_coll_test --gtest_filter='*Neighborhood*' 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== mpi_gpu_test (2 ranks)"; timeout 120 $R $B/mpi_gpu_test 2>&1 | tail -3
}
part_p() {
  uptime
  timeout 120 $R $B/mpi_overhead_bench pingpong --rounds 4 2>&1 | tail -14
  mps_start
  env $MPS timeout 100 $R $B/mpi_overhead_bench pingpong --device --rounds 2 2>&1 | tail -14
  mps_stop
}
for p in "$@"; do "part_$p" >"$O/part-$p.txt" 2>&1; done
