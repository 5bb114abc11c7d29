#!/usr/bin/env bash
# Device run 40 (2026-11-24, session 7), kind nvidia-h200, two ranks on its one GPU. Run 39's
# build less the receive-side wait (only device sends wait for the default stream), the fault
# tests forcing the ring in their ranks, the copier fault test allowing MPS's shared fault. Old =
# bc64fca as in run 39. D->D latency old/new under MPS (copier and IPC kept), three rounds;
# stream_order_bench with and without MPS; host latency old/new, five rounds interleaved.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
$B/stream_order_bench > $OUT/stream-order.txt 2>&1
gpu_tests transport_stream_test transport_stream_ring_test transport_faults_test transport_test \
  api_gpu_test > $OUT/tests.txt 2>&1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
echo "== under MPS" >> $OUT/stream-order.txt
$B/stream_order_bench >> $OUT/stream-order.txt 2>&1
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
for t in transport_stream_test transport_test api_gpu_test; do
  echo "== $t (MPS, $MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES"
done >> $OUT/tests.txt 2>&1
for round in 1 2 3; do
  echo "== round $round OLD D D (MPS)"; env $MPS $RO $O/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
  echo "== round $round NEW D D (MPS)"; env $MPS $R $B/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
done > $OUT/lat-dd.txt 2>&1
echo quit | nvidia-cuda-mps-control
for round in 1 2 3 4 5; do
  echo "== round $round OLD H H"; $RO $O/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 500
  echo "== round $round NEW H H"; $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 500
done > $OUT/host.txt 2>&1
echo done
