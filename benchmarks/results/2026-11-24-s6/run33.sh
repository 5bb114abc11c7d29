#!/usr/bin/env bash
# Device run 33 (2026-11-24, session 6), kind nvidia-h200 (the 2-GPU kinds were not lent): the
# build that fails a faulting copier's copies instead of leaving them waiting. The GPU tests
# (with the copier kept on the one shared GPU too, so the fault test takes the kernel path), the
# fault test's whole output, halo --check, and ctx_probe: what alternating between two CUDA
# contexts on one GPU costs per operation.
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
{
  gpu_tests device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test
  transport_variants
  echo "== transport_test MPIGPU_GPU_COPIER_SHARED=1"
  MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== api_gpu_test MPIGPU_GPU_COPIER_SHARED=1"
  MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/api_gpu_test 2>&1 | grep -E "$GPU_TEST_LINES"
} > $OUT/tests.txt 2>&1
{
  echo "== device_copier_test fault"; timeout 120 $B/device_copier_test --gtest_filter='*Fault*' 2>&1
  echo "== transport_test fault, copy engine"; timeout 180 $B/transport_test --gtest_filter='*Fault*' 2>&1
  echo "== transport_test fault, MPIGPU_GPU_COPIER_SHARED=1"
  MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/transport_test --gtest_filter='*Fault*' 2>&1
} > $OUT/fault.txt 2>&1
{
  timeout 120 $R $B/halo --mode all --check --type float --iters 50
  timeout 120 $R $B/halo --mode all --check --type double --iters 50
} > $OUT/halo-check.txt 2>&1
timeout 300 $B/ctx_probe > $OUT/ctx.txt 2>&1
echo done
