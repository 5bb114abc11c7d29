#!/usr/bin/env bash
# Device run 38 (2026-11-24, session 6), kind nvidia-h200: after the review clean-up (2e4321e:
# the copier's errors through CudaFailure; IpcAllowed, PeerNotifyIndex). The copier tests, the
# transport tests (default, and with the copier kept on the shared GPU: notify slots and the
# fault path), api_gpu.
set -u
. benchmarks/results/device-steps.sh
device_env
{
  gpu_tests device_copier_test transport_test api_gpu_test
  for t in transport_test api_gpu_test; do
    echo "== $t MPIGPU_GPU_COPIER_SHARED=1"
    MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
  done
  echo "== transport_test fault, MPIGPU_GPU_COPIER_SHARED=1"
  MPIGPU_GPU_COPIER_SHARED=1 timeout 180 $B/transport_test --gtest_filter='*Fault*' 2>&1 | grep -E "OK|FAIL|fault|context"
} > $OUT/tests.txt 2>&1
echo done
