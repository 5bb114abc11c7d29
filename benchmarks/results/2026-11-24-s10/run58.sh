#!/usr/bin/env bash
# Device run 58 (2026-11-24, session 10), two ranks on one GPU: the TCP data path of wt-tcpdata
# (5816cca: sends lent from the user buffer, payloads placed in the receive buffer, device buffers
# staged through pinned chunks by the pipeline engine), carried as .device/tcp. Its GPU tests over
# TCP (MPIGPU_SHM=0, as their Bazel targets set), with and without MPS; then D->D vs H->H over
# loopback TCP (pingpong, 64 MiB, and the sweep's bandwidth series), alternating, under MPS.
set -u
. benchmarks/results/device-steps.sh
device_env
T=.device/tcp
RT="$T/mpigpurun -n 2 --bind-to core"
{
  echo "== tcp_datapath_test (MPIGPU_SHM=0)"; MPIGPU_SHM=0 timeout 180 $T/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== tcp_datapath_test (MPIGPU_SHM=0 MPIGPU_NET_SOCKBUF=16K)"
  MPIGPU_SHM=0 MPIGPU_NET_SOCKBUF=16K timeout 180 $T/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test (MPIGPU_SHM=0)"; MPIGPU_SHM=0 timeout 180 $T/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test (MPIGPU_LMT=chan)"; MPIGPU_LMT=chan timeout 180 $T/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
mps_start && echo "MPS started" >> $OUT/tests.txt
{
  echo "== tcp_datapath_test (MPS, MPIGPU_SHM=0)"; env $MPS MPIGPU_SHM=0 timeout 180 $T/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== transport_test (MPS, MPIGPU_SHM=0)"; env $MPS MPIGPU_SHM=0 timeout 180 $T/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
{
  for round in 1 2 3; do
    for kind in "H H" "D D"; do
      echo "== round $round tcp pingpong $kind (MPIGPU_SHM=0, MPS)"
      env $MPS MPIGPU_SHM=0 timeout 60 $RT $T/pingpong $kind $((64 << 20)) 2>&1 | grep -vE "^#"
    done
  done
  for round in 1 2 3; do
    for kind in "H H" "D D"; do
      echo "== round $round tcp sweep bw $kind (MPIGPU_SHM=0, MPS)"
      env $MPS MPIGPU_SHM=0 timeout 90 $RT $T/mpigpu-sweep bw $kind -m 64K:64M -i 10 -x 2 2>&1 | grep -E "^[0-9]"
    done
  done
} > $OUT/tcp.txt 2>&1
mps_stop
echo done
