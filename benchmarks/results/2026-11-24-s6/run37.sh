#!/usr/bin/env bash
# Device run 37 (2026-11-24, session 6), kind nvidia-h200; two ranks share the one GPU. Build
# 7c7fe60 (MPIGPU_SHARED_GPU_IPC_MIN = 4M): transport and API GPU tests, D->D latency (auto).
set -u
. benchmarks/results/device-steps.sh
device_env
{
  gpu_tests transport_test api_gpu_test
  for v in MPIGPU_SHARED_GPU_IPC_MIN=0 MPIGPU_LMT=ring; do
    echo "== transport_test $v"; env $v timeout 180 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  done
} > $OUT/tests.txt 2>&1
$R $B/mpigpu-sweep latency D D -m 8:64M -i 200 -x 20 > $OUT/lat-dd.txt 2>&1
echo done
