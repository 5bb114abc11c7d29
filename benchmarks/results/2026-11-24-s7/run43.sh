#!/usr/bin/env bash
# Device run 43 (2026-11-24, session 7), kind nvidia-h200, two ranks on its one GPU: the build
# that lands (issue 15 complete, MPIGPU_DEFAULT_STREAM_ORDER added). Old = bc64fca. Every GPU
# test without and with MPS (copier and IPC kept on the shared GPU); halo --check both ways;
# D->D latency under MPS: old, new, new with MPIGPU_DEFAULT_STREAM_ORDER=0, three rounds.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
{
  gpu_tests memcopy_test transport_stream_test transport_stream_ring_test transport_faults_test \
    transport_test api_gpu_test api_p2p_test api_request_test device_copier_test cuda_ipc_test
  transport_variants
  echo "== halo check"; timeout 120 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
{
  for t in memcopy_test transport_stream_test transport_stream_ring_test transport_faults_test \
           transport_test api_gpu_test api_p2p_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
  echo "== halo check (MPS, $MPS)"
  env $MPS timeout 120 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
for round in 1 2 3; do
  echo "== round $round OLD D D (MPS)"; env $MPS $RO $O/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
  echo "== round $round NEW D D (MPS)"; env $MPS $R $B/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
  echo "== round $round NEWOFF D D (MPS, MPIGPU_DEFAULT_STREAM_ORDER=0)"
  env $MPS MPIGPU_DEFAULT_STREAM_ORDER=0 $R $B/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
done > $OUT/lat-dd.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
