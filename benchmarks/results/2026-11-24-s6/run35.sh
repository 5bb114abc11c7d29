#!/usr/bin/env bash
# Device run 35 (2026-11-24, session 6), kind nvidia-h200 (the 2-GPU kinds were not lent); the
# two ranks share the one GPU. Build 'new' = 30720f5 (eager cells pinned), 'old' =
# 415043e (.device/old: mpigpu-sweep, mpigpurun; cells pageable). GPU tests on the new build;
# then latency H->D (eager through cells) and D->D with MPIGPU_LMT=ring (eager both ways),
# old and new alternated, two rounds each.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
device_info > $OUT/env.txt 2>&1
{
  gpu_tests device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test
  transport_variants
} > $OUT/tests.txt 2>&1
{
  L="-m 8:256K -i 1000 -x 50"
  for rep in 1 2; do
    echo "## rep $rep old H D"; $O/mpigpurun -n 2 --bind-to core $O/mpigpu-sweep latency H D $L
    echo "## rep $rep new H D"; $R $B/mpigpu-sweep latency H D $L
    echo "## rep $rep old D D ring"; MPIGPU_LMT=ring $O/mpigpurun -n 2 --bind-to core $O/mpigpu-sweep latency D D $L
    echo "## rep $rep new D D ring"; MPIGPU_LMT=ring $R $B/mpigpu-sweep latency D D $L
  done
} > $OUT/lat.txt 2>&1
echo done
