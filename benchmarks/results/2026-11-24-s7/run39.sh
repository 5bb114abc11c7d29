#!/usr/bin/env bash
# Device run 39 (2026-11-24, session 7), one GPU, two ranks on it. Issue 15: device messages
# ordered after the default stream. New build = main at the run (.device/bin); old = bc64fca
# (.device/old: transport_stream_test built from this session's test source, mpigpu-sweep,
# mpigpurun). Tests without and with a private MPS daemon; D->D latency old/new under MPS with
# the copier and IPC kept on the shared GPU; host latency and bandwidth old/new, interleaved.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
$B/stream_order_bench > $OUT/stream-order.txt 2>&1
{
  echo "== OLD transport_stream_test (no MPS)"
  timeout 240 $O/transport_stream_test 2>&1 | grep -E "$GPU_TEST_LINES|wrong bytes" | head -40
  gpu_tests transport_stream_test transport_stream_ring_test transport_faults_test transport_test \
    api_gpu_test api_p2p_test device_copier_test cuda_ipc_test api_request_test
} > $OUT/tests.txt 2>&1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
{
  echo "== OLD transport_stream_test (MPS, $MPS)"
  env $MPS timeout 240 $O/transport_stream_test 2>&1 | grep -E "$GPU_TEST_LINES|wrong bytes" | head -40
  for t in transport_stream_test transport_stream_ring_test transport_test api_gpu_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
  done
} >> $OUT/tests.txt 2>&1
{
  for round in 1 2; do
    echo "== round $round OLD D D (MPS)"; env $MPS $RO $O/mpigpu-sweep latency D D -m 1:1M -i 500 -x 50
    echo "== round $round NEW D D (MPS)"; env $MPS $R $B/mpigpu-sweep latency D D -m 1:1M -i 500 -x 50
  done
} > $OUT/lat-dd.txt 2>&1
echo quit | nvidia-cuda-mps-control
{
  for round in 1 2 3; do
    echo "== round $round OLD H H"; $RO $O/mpigpu-sweep latency H H -m 1:64K -i 2000 -x 200
    echo "== round $round NEW H H"; $R $B/mpigpu-sweep latency H H -m 1:64K -i 2000 -x 200
  done
  echo "== OLD bw H H"; $RO $O/mpigpu-sweep bw H H -m 1M:64M
  echo "== NEW bw H H"; $R $B/mpigpu-sweep bw H H -m 1M:64M
} > $OUT/host.txt 2>&1
echo done
