#!/usr/bin/env bash
# Device run 32 (2026-11-24, session 5), kind nvidia-h200-x2: three builds alternated.
#   old = 729a1d9 (before this session), mid = 3bf71f4 (one-poller copier),
#   new = 3fc1811 (mid + device sends completed by the receiver's kernel: notify slots).
# GPU tests of the new build on two GPUs; the copier's cost; isolated exchanges (pingpong); D->D
# latency; the halo exchange (weak, double), five rounds of old/mid/new; float and --check.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old; M=.device/mid
dir_of() { case $1 in old) echo $O ;; mid) echo $M ;; *) echo $B ;; esac; }
device_info > $OUT/env.txt 2>&1
{
  gpu_tests device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test
  transport_variants
} > $OUT/tests.txt 2>&1
{
  F="--benchmark_filter=BM_Copier --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
  for rep in 1 2; do
    echo "## rep $rep old"; $O/copier_bench $F
    echo "## rep $rep new"; $B/copier_bench $F
  done
  for rep in 1 2 3; do
    for v in old mid new; do
      echo "## exchange rep $rep $v"; $R $(dir_of $v)/pingpong D D 8192 exchange
    done
  done
} > $OUT/copier.txt 2>&1
{
  for rep in 1 2; do
    for v in old mid new; do
      echo "## rep $rep $v"; $R $(dir_of $v)/mpigpu-sweep latency D D -m 8:64K -i 2000 -x 100
    done
  done
} > $OUT/lat-dd.txt 2>&1
{
  H="--mode all --weak --type double --iters 200"
  for rep in 1 2 3 4 5; do
    for v in old mid new; do echo "## rep $rep $v"; timeout 120 $R $(dir_of $v)/halo $H; done
  done
  echo "## new, float"; timeout 120 $R $B/halo --mode all --weak --type float --iters 200
  echo "## new, double, --check"; timeout 300 $R $B/halo $H --check
} > $OUT/halo.txt 2>&1
echo done
