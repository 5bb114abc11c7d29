#!/usr/bin/env bash
# Session 14, device run 73 (one H200, two ranks on it): Finalize now waits for ranks on other
# nodes through the boot server (wt-findeath, merged at 08d9ed8). The transport suite as two nodes
# of this machine over TCP (transport_nodes_test's settings, where its GPU cases run), the
# Finalize cases across two nodes, the one-node suites, and mpigpurun's Supervisor (split into
# tools/supervisor) with its job-private MPS daemon. Logs to $OUT.
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out73}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
rf=$PWD/.device/rf/mpigpu
mkdir -p $rf/tools $rf/tests
ln -sf $PWD/$B/mpigpurun $rf/tools/mpigpurun
ln -sf $PWD/$B/mps_rank $rf/tests/mps_rank
ln -sf $PWD/$B/launcher_probe $rf/tests/launcher_probe
export TEST_SRCDIR=$PWD/.device/rf TEST_WORKSPACE=mpigpu
{
  echo "== transport_test as two nodes (MULTIPROC_NODES=2 MPIGPU_NETMOD=tcp)"
  MULTIPROC_NODES=2 MPIGPU_NETMOD=tcp timeout 240 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== finalize_nodes_test (MULTIPROC_NODES=2 MPIGPU_NETMOD=tcp)"
  MULTIPROC_NODES=2 MPIGPU_NETMOD=tcp timeout 120 $B/finalize_nodes_test 2>&1 | grep -E "$GPU_TEST_LINES"
  gpu_tests transport_test transport_stream_test api_gpu_test api_p2p_test launcher_mps_gpu_test
  echo "== mpi_gpu_test (2 ranks)"; timeout 120 $R $B/mpi_gpu_test 2>&1 | tail -3
  echo "== nvidia-cuda-mps processes left:"; pgrep -a nvidia-cuda-mps || echo "(none)"
} 2>&1 | grep -vE "$SKIPS" >"$D/tests.txt"
