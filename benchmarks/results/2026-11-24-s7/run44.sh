#!/usr/bin/env bash
# Device run 44 (2026-11-24, session 7), kind nvidia-h200: what each default-stream check costs
# while the resident copy kernel runs on its own stream (stream_order_bench --copier), without
# and under MPS; for issue 20 (run 43: ~2 us per device send under MPS with the copier).
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
$B/stream_order_bench --copier > $OUT/stream-order.txt 2>&1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
echo "== under MPS" >> $OUT/stream-order.txt
$B/stream_order_bench --copier >> $OUT/stream-order.txt 2>&1
echo quit | nvidia-cuda-mps-control
echo done
