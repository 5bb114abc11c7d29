#!/usr/bin/env bash
# Device run 51 (2026-11-24, session 8), two ranks on one H200: where does run 50's ~9% D->D
# bandwidth gap (256K-2M, under MPS) come from? Old (7eddb37) and new alternating, four rounds
# each: (a) MPS as in run 50; (b) MPS with MPIGPU_GPU_COPIER_MAX=0 (no resident kernel, acks too
# on the copy engine); (c) no MPS (same-GPU sends below 4M go through the ring); (d) host H->H
# latency and bandwidth on this quiet 16-core node (the CPU path alone).
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
ab() {  # label, environment, sweep arguments
  local label=$1 envs=$2; shift 2
  for round in 1 2 3 4; do
    echo "== round $round OLD $label"; env $envs $RO $O/mpigpu-sweep "$@"
    echo "== round $round NEW $label"; env $envs $R $B/mpigpu-sweep "$@"
  done
}
{
  ab "host-lat" "MPIGPU_DEBUG=warn" latency H H -m 1:64K -i 4000 -x 400
  ab "host-bw" "MPIGPU_DEBUG=warn" bw H H -m 1K:2M -i 40 -x 5
  ab "nomps-bw-DD" "MPIGPU_DEBUG=warn" bw D D -m 256K:2M -i 40 -x 5
} > $OUT/nomps.txt 2>&1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
{
  ab "mps-bw-DD" "$MPS" bw D D -m 256K:2M -i 40 -x 5
  ab "mps-nocopier-bw-DD" "$MPS MPIGPU_GPU_COPIER_MAX=0 MPIGPU_GPU_COPIER_STRIDED_MAX=0" bw D D -m 256K:2M -i 40 -x 5
} > $OUT/mps.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
