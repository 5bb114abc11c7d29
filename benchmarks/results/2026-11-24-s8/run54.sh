#!/usr/bin/env bash
# Device run 54 (2026-11-24, session 8), two ranks on one GPU: the build that lands (the seam after
# its review and the copier health check back on the peer-check cadence, run 53). Every GPU test
# binary without and with MPS, the conformance variants (MPIGPU_LMT=chan, MPIGPU_CHANNEL=socket),
# halo --check both ways. Same steps as run 50, without its benchmarks.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
conformance() {  # $1: extra environment
  for v in "MPIGPU_LMT=chan" "MPIGPU_CHANNEL=socket"; do
    echo "== transport_test $v $1"; env $v $1 timeout 240 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
}
{
  gpu_tests memcopy_test transport_stream_test transport_faults_test transport_test api_gpu_test \
    api_p2p_test api_request_test device_copier_test cuda_ipc_test
  transport_variants
  conformance ""
  echo "== halo check"; timeout 120 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
{
  for t in transport_stream_test transport_faults_test transport_test api_gpu_test api_p2p_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
  conformance "$MPS"
  echo "== halo check (MPS, $MPS)"
  env $MPS timeout 120 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
echo quit | nvidia-cuda-mps-control
echo done
