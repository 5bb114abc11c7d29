#!/usr/bin/env bash
# Device run 34 (2026-11-24, session 6), kind nvidia-h200 (the 2-GPU kinds were not lent); build
# 415043e (a faulting copier's copies fail instead of waiting; CUDA errors taken out of the
# runtime's last-error state). Every GPU test, in every transport variant and with the copier
# kept on the shared GPU; the fault tests' whole output; halo --check; ctx_probe ops 7 and 8
# (pageable H2D and D2H: the cells of eager messages are pageable shared memory).
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
{
  gpu_tests device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test
  transport_variants
  for t in transport_test api_gpu_test; do
    echo "== $t MPIGPU_GPU_COPIER_SHARED=1"
    MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
  done
} > $OUT/tests.txt 2>&1
{
  echo "== device_copier_test fault"
  timeout 120 $B/device_copier_test --gtest_filter='*Fault*' 2>&1 | grep -E "OK|FAIL|PASS|fault"
  for v in "" "MPIGPU_GPU_COPIER_SHARED=1" "MPIGPU_LMT=ring"; do
    echo "== transport_test fault, $v"
    env $v timeout 180 $B/transport_test --gtest_filter='*Fault*' 2>&1 | grep -v "^\[ RUN\|^Running\|^Note\|^\[---\|^\[===\|^$"
  done
} > $OUT/fault.txt 2>&1
{
  timeout 120 $R $B/halo --mode all --check --type float --iters 50
  timeout 120 $R $B/halo --mode all --check --type double --iters 50
} > $OUT/halo-check.txt 2>&1
timeout 200 $B/ctx_probe 7 8 > $OUT/ctx.txt 2>&1
echo done
