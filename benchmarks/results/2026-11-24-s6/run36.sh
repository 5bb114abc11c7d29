#!/usr/bin/env bash
# Device run 36 (2026-11-24, session 6), kind nvidia-h200 (the 2-GPU kinds were not lent); the
# two ranks share the one GPU. Build 5014a0f (MPIGPU_SHARED_GPU_IPC_MIN, then 1M). GPU
# tests (also with the IPC copy at every size: MPIGPU_SHARED_GPU_IPC_MIN=0); D->D latency from
# 8 B to 64 MiB: auto (the new policy), MPIGPU_LMT=ipc (the IPC copy at every size, as before)
# and MPIGPU_LMT=ring; the halo exchange, auto against MPIGPU_LMT=ipc and staged, two rounds.
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
{
  gpu_tests device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test
  transport_variants
  for v in MPIGPU_SHARED_GPU_IPC_MIN=0 MPIGPU_GPU_COPIER_SHARED=1; do
    for t in transport_test api_gpu_test; do
      echo "== $t $v"; env $v timeout 180 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
    done
  done
} > $OUT/tests.txt 2>&1
{
  L="-m 8:64M -i 200 -x 20"
  for v in MPIGPU_LMT=auto MPIGPU_LMT=ipc MPIGPU_LMT=ring; do
    echo "## $v"; env $v $R $B/mpigpu-sweep latency D D $L
  done
} > $OUT/lat-dd.txt 2>&1
{
  H="--weak --type double --iters 200"
  for rep in 1 2; do
    echo "## rep $rep auto"; timeout 120 $R $B/halo --mode all $H
    echo "## rep $rep MPIGPU_LMT=ipc"; MPIGPU_LMT=ipc timeout 120 $R $B/halo --mode mpigpu $H
  done
  echo "## check"; timeout 120 $R $B/halo --mode all --check --type float --iters 50
} > $OUT/halo.txt 2>&1
echo done
