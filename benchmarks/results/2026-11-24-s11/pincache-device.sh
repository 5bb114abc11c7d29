#!/usr/bin/env bash
# The pin cache on one GPU (issue 20, second part): its GPU tests and the 1st/2nd/nth-use
# benchmark, logs under $OUT. Build and carry (.device/bin):
#   bazel build -c opt //tests:pin_cache_gpu_test //tests:pin_cache_off_gpu_test \
#     //benchmarks:pincache_bench //tools:mpigpurun //tests:transport_test //tests:pipeline_gpu_test \
#     //tests:api_gpu_test //tests:cuda_ipc_test //tests:memcopy_test
#   cp the binaries into .device/bin (the byte-checking regression runs those that are there)
#   env.txt     the GPU, and whether the driver lists it (the hooks' default condition)
#   tests.txt   pin_cache_gpu_test with the default settings (the pin cache on because a GPU is
#               there) and with MPIGPU_PIN_CACHE=1; the OffSwitch test with MPIGPU_PIN_CACHE=0;
#               transport_test's ReusedPageableHostBuffers* (one host buffer reused three times
#               per size around the thresholds, between two ranks, with its pin-cache counters);
#               the byte-checking GPU tests (when carried) with the pin cache on
#   local.txt   pincache_bench local, cache on, then MPIGPU_PIN_CACHE=0 (the pageable rate)
#   ranks.txt   mpigpurun -n 2 pincache_bench ranks (one GPU), cache on, then off
# Target (issue 20): nth/pinned >= 80% from 1 MiB (local.txt, and ranks.txt where the message
# takes CUDA IPC: from MPIGPU_SHARED_GPU_IPC_MIN, 4 MiB, on one GPU).
set -u
. benchmarks/results/device-steps.sh
device_env
{
  device_info
  echo "== hooks: /proc/driver/nvidia/gpus: $(ls /proc/driver/nvidia/gpus 2>&1 | head -3 | tr '\n' ' ')"
  echo "== /sys/class/infiniband: $(ls /sys/class/infiniband 2>&1 | tr '\n' ' ')"
} > $OUT/env.txt 2>&1
{
  echo "== pin_cache_gpu_test (defaults)"; timeout 240 $B/pin_cache_gpu_test 2>&1 | grep -vE "^\[ RUN|^\[       OK"
  echo "== pin_cache_gpu_test MPIGPU_PIN_CACHE=1"
  MPIGPU_PIN_CACHE=1 timeout 240 $B/pin_cache_gpu_test 2>&1 | grep -E "$GPU_TEST_LINES|Failure|pin stats"
  echo "== pin_cache_off_gpu_test MPIGPU_PIN_CACHE=0"
  MPIGPU_PIN_CACHE=0 timeout 60 $B/pin_cache_off_gpu_test --gtest_filter='*OffSwitch*' 2>&1 | grep -vE "^\[ RUN"
  echo "== transport_test ReusedPageableHostBuffers*"
  timeout 240 $B/transport_test --gtest_filter='*ReusedPageable*' 2>&1 | grep -E "$GPU_TEST_LINES|pin cache|mismatch"
  for t in pipeline_gpu_test transport_test api_gpu_test cuda_ipc_test memcopy_test; do
    [ -x $B/$t ] || { echo "== $t: not carried"; continue; }
    echo "== $t (pin cache on)"; timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
  done
} > $OUT/tests.txt 2>&1
{
  echo "== local, pin cache on"; timeout 240 $B/pincache_bench local
  echo "== local, MPIGPU_PIN_CACHE=0"; MPIGPU_PIN_CACHE=0 timeout 240 $B/pincache_bench local
} > $OUT/local.txt 2>&1
{
  echo "== ranks, pin cache on"; timeout 240 $R $B/pincache_bench ranks
  echo "== ranks, MPIGPU_PIN_CACHE=0"; MPIGPU_PIN_CACHE=0 timeout 240 $R $B/pincache_bench ranks
} > $OUT/ranks.txt 2>&1
echo done
