#!/usr/bin/env bash
# Device run 55 (2026-11-24, session 9), two ranks on one GPU: the build after issue 16's end
# (instruction cuts, the Messenger interface, one packer) and issue 17's first part (the job's
# Bootstrap, the TCP netmod, per-peer routes). Every GPU test binary without and with MPS, the
# conformance variants (chan, socket, tcp = MPIGPU_SHM=0, two nodes = MPIGPU_TEST_NODES=2), halo
# --check; D->D under MPS, pre-seam build (.device/old) vs this one, 4 alternating rounds; device
# buffers over TCP loopback (MPIGPU_SHM=0) vs host buffers on the same path.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
conformance() {  # $1: extra environment
  for v in "MPIGPU_LMT=chan" "MPIGPU_CHANNEL=socket" "MPIGPU_SHM=0" "MPIGPU_TEST_NODES=2"; do
    echo "== transport_test $v $1"; env $v $1 timeout 120 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
}
{
  gpu_tests memcopy_test transport_stream_test transport_faults_test transport_test api_gpu_test \
    api_p2p_test api_request_test device_copier_test cuda_ipc_test pipeline_gpu_test api_datatype_test
  conformance ""
  echo "== halo check"; timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
{
  for t in transport_faults_test transport_test api_gpu_test api_p2p_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 120 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
  conformance "$MPS"
  echo "== halo check (MPS, $MPS)"
  env $MPS timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
ab() {  # label, environment, sweep arguments
  local label=$1 envs=$2; shift 2
  for round in 1 2 3 4; do
    echo "== round $round OLD $label"; env $envs timeout 60 $RO $O/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
    echo "== round $round NEW $label"; env $envs timeout 60 $R $B/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]"
  done
}
{
  ab "mps-bw-DD" "$MPS" bw D D -m 256K:2M -i 30 -x 5
  ab "mps-lat-DD" "$MPS" latency D D -m 1:64K -i 500 -x 50
} > $OUT/mps.txt 2>&1
{
  for kind in "H H" "D D" "H H" "D D"; do
    echo "== tcp pingpong $kind (MPIGPU_SHM=0, MPS)"
    env $MPS MPIGPU_SHM=0 timeout 60 $R $B/pingpong $kind $((64 << 20)) 2>&1 | grep -vE "^#"
  done
} > $OUT/tcp.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
