#!/usr/bin/env bash
# Device run 42 (2026-11-24, session 7), kind nvidia-h200, two ranks on its one GPU. Device sends
# wait for the default stream through DefaultStreamOrder (the cheapest of a stream query, a
# stream synchronize and an
# event, timed on first use); the peer check takes in what a dead peer sent before failing
# anything. Old = bc64fca.
# Tests without and with MPS; stream_order_bench both ways; D->D latency old/new under MPS
# (copier and IPC kept on the shared GPU) and without it, three rounds interleaved.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
$B/stream_order_bench > $OUT/stream-order.txt 2>&1
gpu_tests memcopy_test transport_stream_test transport_stream_ring_test transport_faults_test \
  transport_test api_gpu_test api_p2p_test api_request_test device_copier_test cuda_ipc_test \
  > $OUT/tests.txt 2>&1
transport_variants >> $OUT/tests.txt 2>&1
for round in 1 2; do
  echo "== round $round OLD D D"; $RO $O/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
  echo "== round $round NEW D D"; $R $B/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
done > $OUT/lat-dd-nomps.txt 2>&1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "MPS started" >> $OUT/tests.txt
echo "== under MPS" >> $OUT/stream-order.txt
$B/stream_order_bench >> $OUT/stream-order.txt 2>&1
MPS="MPIGPU_GPU_COPIER_SHARED=1 MPIGPU_SHARED_GPU_IPC_MIN=0"
for t in memcopy_test transport_stream_test transport_stream_ring_test transport_test api_gpu_test; do
  echo "== $t (MPS, $MPS)"; env $MPS timeout 240 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
done >> $OUT/tests.txt 2>&1
for round in 1 2 3; do
  echo "== round $round OLD D D (MPS)"; env $MPS $RO $O/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
  echo "== round $round NEW D D (MPS)"; env $MPS $R $B/mpigpu-sweep latency D D -m 1:1M -i 1000 -x 100
done > $OUT/lat-dd.txt 2>&1
echo "== which way each rank chose (MPIGPU_DEBUG=info), MPS" >> $OUT/stream-order.txt
env $MPS MPIGPU_DEBUG=info $R $B/mpigpu-sweep latency D D -m 8:8 -i 100 -x 10 2>&1 |
  grep -E "default stream" >> $OUT/stream-order.txt
echo quit | nvidia-cuda-mps-control
echo "== which way each rank chose (MPIGPU_DEBUG=info), no MPS" >> $OUT/stream-order.txt
MPIGPU_DEBUG=info $R $B/mpigpu-sweep latency D D -m 8:8 -i 100 -x 10 2>&1 |
  grep -E "default stream" >> $OUT/stream-order.txt
for round in 1 2 3 4 5; do
  echo "== round $round OLD H H"; $RO $O/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 500
  echo "== round $round NEW H H"; $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 500
done > $OUT/host.txt 2>&1
for round in 1 2; do
  echo "== round $round OLD bw H H"; $RO $O/mpigpu-sweep bw H H -m 1M:64M
  echo "== round $round NEW bw H H"; $R $B/mpigpu-sweep bw H H -m 1M:64M
done > $OUT/host-bw.txt 2>&1
echo done
