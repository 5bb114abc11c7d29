#!/usr/bin/env bash
# Device run 53 (2026-11-24, session 8), two ranks on one H200 under MPS: run 52 kept the D->D
# bandwidth gap with the default-stream check off, run 51 lost it with the resident copier off.
# The seam had moved the copier's health check (cudaStreamQuery on its stream, every ~20 ms) into
# the IPC back-end's progress while it had copies; old code ran it on the peer-check cadence
# whatever. Now restored (LmtBackend::Tick). Old (7eddb37) and new alternating, four rounds of bw
# and latency; then transport_test, transport_faults_test and api_p2p_test under MPS.
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
    echo "== round $round OLD $label"; env $envs $RO $O/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
    echo "== round $round NEW $label"; env $envs $R $B/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
  done
}
{
  ab "mps-bw-DD" "$MPS" bw D D -m 256K:2M -i 40 -x 5
  ab "mps-lat-DD" "$MPS" latency D D -m 1:1M -i 1000 -x 100
} > $OUT/mps.txt 2>&1
for t in transport_test transport_faults_test api_p2p_test; do
  echo "== $t (MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
done > $OUT/tests.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
