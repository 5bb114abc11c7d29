#!/usr/bin/env bash
# Device run 52 (2026-11-24, session 8), two ranks on one H200 under MPS: run 51 saw the D->D gap
# only with the resident copier on. Is it the default-stream check each process picks by timing
# at its first device send (memcopy/stream_order.h)? Old (7eddb37) and new alternating, four
# rounds: bw and latency as in run 50, printing each rank's pick (MPIGPU_DEBUG=info); then the
# same with MPIGPU_DEFAULT_STREAM_ORDER=0 (no check).
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
ab() {  # label, environment, sweep arguments
  local label=$1 envs=$2; shift 2
  for round in 1 2 3 4; do
    echo "== round $round OLD $label"; env $envs $RO $O/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]|default stream by"
    echo "== round $round NEW $label"; env $envs $R $B/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]|default stream by"
  done
}
{
  ab "mps-bw-DD" "$MPS MPIGPU_DEBUG=info" bw D D -m 256K:2M -i 40 -x 5
  ab "mps-lat-DD" "$MPS MPIGPU_DEBUG=info" latency D D -m 1:32K -i 1000 -x 100
  ab "mps-noorder-bw-DD" "$MPS MPIGPU_DEFAULT_STREAM_ORDER=0" bw D D -m 256K:2M -i 40 -x 5
  ab "mps-noorder-lat-DD" "$MPS MPIGPU_DEFAULT_STREAM_ORDER=0" latency D D -m 1:32K -i 1000 -x 100
} > $OUT/mps.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
