#!/usr/bin/env bash
# Device run 31 (2026-11-24, session 5), kind nvidia-h200 (the 2-GPU kind was not lent): the
# one-poller copier (3bf71f4) against the copier before this session (.device/old: 729a1d9's
# copier_bench), the GPU tests, and the two ranks sharing one GPU: the IPC single copy (default)
# against the ring (MPIGPU_LMT=ring) for the halo exchange and D->D latency.
set -u
B=.device/bin; O=.device/old
NCCL_DIR=$(dirname "$(find /opt /usr -name libnccl.so.2 2>/dev/null | head -1)")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:$NCCL_DIR:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
{ nvidia-smi -L; nproc; echo "NCCL: $NCCL_DIR"; } > $OUT/env.txt 2>&1
{
  for t in device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rank check"
  done
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
} > $OUT/tests.txt 2>&1
{
  F="--benchmark_filter=BM_Copier --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
  for rep in 1 2 3; do
    echo "## rep $rep old"; $O/copier_bench $F
    echo "## rep $rep new"; $B/copier_bench $F
  done
} > $OUT/copier.txt 2>&1
{
  echo "## default (IPC)"; $R $B/mpigpu-sweep latency D D -m 8:64K -i 1000 -x 50
  echo "## MPIGPU_LMT=ring"; MPIGPU_LMT=ring $R $B/mpigpu-sweep latency D D -m 8:64K -i 1000 -x 50
} > $OUT/lat-dd.txt 2>&1
{
  H="--weak --type double --iters 200"
  for rep in 1 2; do
    echo "## rep $rep default"; timeout 120 $R $B/halo --mode all $H
    echo "## rep $rep MPIGPU_LMT=ring"; MPIGPU_LMT=ring timeout 120 $R $B/halo --mode mpigpu $H
  done
} > $OUT/halo.txt 2>&1
echo done
