#!/usr/bin/env bash
# Device run 30 (2026-11-24, session 5), kind nvidia-h200-x2: the resident copier with several
# polling warps (MPIGPU_GPU_COPIER_POLLERS) against one, and against the kernel before this
# session (.device/old: 729a1d9's halo and copier_bench); the GPU tests; halo with the new
# net_us column (exchange time after the last rank entered it).
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
  echo "== transport_test MPIGPU_GPU_COPIER_POLLERS=1"
  MPIGPU_GPU_COPIER_POLLERS=1 timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
} > $OUT/tests.txt 2>&1
{
  F="--benchmark_filter=BM_Copier --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
  echo "## old"; $O/copier_bench $F
  for p in 1 2 3 4; do echo "## pollers $p"; MPIGPU_GPU_COPIER_POLLERS=$p $B/copier_bench $F; done
} > $OUT/copier.txt 2>&1
{
  for p in 1 4; do
    echo "## pollers $p"
    MPIGPU_GPU_COPIER_POLLERS=$p $R $B/mpigpu-sweep latency D D -m 8:64K -i 2000 -x 100
  done
} > $OUT/lat-dd.txt 2>&1
{
  H="--mode all --weak --type double --iters 200"
  for rep in 1 2 3; do
    echo "## rep $rep old"; timeout 120 $R $O/halo $H
    echo "## rep $rep pollers 1"; MPIGPU_GPU_COPIER_POLLERS=1 timeout 120 $R $B/halo $H
    echo "## rep $rep pollers 4"; MPIGPU_GPU_COPIER_POLLERS=4 timeout 120 $R $B/halo $H
  done
  echo "## check, pollers 4"; timeout 240 $R $B/halo $H --check
} > $OUT/halo.txt 2>&1
echo done
