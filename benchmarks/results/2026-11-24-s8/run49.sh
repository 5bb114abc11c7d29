#!/usr/bin/env bash
# Device run 49 (2026-11-24, session 8), two ranks on one GPU under MPS: D->D bandwidth old
# (7eddb37) and new (the seam, with IpcLmt::Finished no longer searching its list for copies that
# Progress already retired) alternating, five rounds; transport_test over the socket channel (its
# IPC-offer test now skips where CUDA IPC is not in the pair's path).
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
for v in "MPIGPU_CHANNEL=socket"; do
  echo "== transport_test $v (MPS)"; env $v $MPS timeout 240 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
done > $OUT/tests.txt 2>&1
for round in 1 2 3 4 5; do
  echo "== round $round OLD bandwidth D D (MPS)"; env $MPS $RO $O/mpigpu-sweep bw D D -m 256K:16M -i 40 -x 5
  echo "== round $round NEW bandwidth D D (MPS)"; env $MPS $R $B/mpigpu-sweep bw D D -m 256K:16M -i 40 -x 5
done > $OUT/dd.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
