#!/usr/bin/env bash
# Device run 32 (2026-11-24, session 5), kind nvidia-h200-x2: three builds alternated.
#   old = 729a1d9 (before this session), mid = 3bf71f4 (one-poller copier),
#   new = the working tree (mid + the receiver's kernel completes device sends: notify slots).
# GPU tests of the new build on two GPUs; the copier's cost; isolated exchanges (pingpong); D->D
# latency; the halo exchange (weak, double), five rounds of old/mid/new; float and --check.
set -u
B=.device/bin; O=.device/old; M=.device/mid
NCCL_DIR=$(dirname "$(find /opt /usr -name libnccl.so.2 2>/dev/null | head -1)")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:$NCCL_DIR:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
{ nvidia-smi -L; nvidia-smi topo -m | head -4; nproc; echo "NCCL: $NCCL_DIR"; } > $OUT/env.txt 2>&1
{
  for t in device_copier_test cuda_ipc_test api_gpu_test api_p2p_test transport_test; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rank check|want"
  done
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|want"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|want"
} > $OUT/tests.txt 2>&1
{
  F="--benchmark_filter=BM_Copier --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
  for rep in 1 2; do
    echo "## rep $rep old"; $O/copier_bench $F
    echo "## rep $rep new"; $B/copier_bench $F
  done
  for rep in 1 2 3; do echo "## exchange rep $rep new"; $R $B/pingpong D D 8192 exchange; done
} > $OUT/copier.txt 2>&1
{
  for rep in 1 2; do
    for v in old mid new; do
      d=$O; [ $v = mid ] && d=$M; [ $v = new ] && d=$B
      echo "## rep $rep $v"; $R $d/mpigpu-sweep latency D D -m 8:64K -i 2000 -x 100
    done
  done
} > $OUT/lat-dd.txt 2>&1
{
  H="--mode all --weak --type double --iters 200"
  for rep in 1 2 3 4 5; do
    for v in old mid new; do
      d=$O; [ $v = mid ] && d=$M; [ $v = new ] && d=$B
      echo "## rep $rep $v"; timeout 120 $R $d/halo $H
    done
  done
  echo "## new, float"; timeout 120 $R $B/halo --mode all --weak --type float --iters 200
  echo "## new, double, --check"; timeout 300 $R $B/halo $H --check
} > $OUT/halo.txt 2>&1
echo done
