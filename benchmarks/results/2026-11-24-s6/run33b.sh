#!/usr/bin/env bash
# Device run 33b (2026-11-24, session 6), kind nvidia-h200: the fault test as rewritten after run
# 33 (the copy engine refuses a bad destination and the context lives on), in every transport
# variant; ctx_probe's cudaMemcpyBatchAsync ops (5, 6: the hint to leave the SMs to compute).
set -u
. benchmarks/results/device-steps.sh
device_env
{
  gpu_tests transport_test
  transport_variants
  echo "== transport_test MPIGPU_GPU_COPIER_SHARED=1"
  MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  for v in "" "MPIGPU_GPU_COPIER_SHARED=1" "MPIGPU_LMT=ring"; do
    echo "== transport_test fault, $v"; env $v timeout 180 $B/transport_test --gtest_filter='*Fault*' 2>&1 | grep -v "^\[ RUN\|^Running\|^Note\|^\[---\|^\[===\|^$"
  done
} > $OUT/tests.txt 2>&1
timeout 200 $B/ctx_probe 5 6 > $OUT/ctx.txt 2>&1
echo done
