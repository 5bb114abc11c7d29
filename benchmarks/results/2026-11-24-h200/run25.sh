#!/usr/bin/env bash
# Device run 25 (2026-11-24), kind nvidia-h200 (one H200, 16-core host): GPU tests of this build,
# host latency/bandwidth of the API before and after the receive shortcut against Open MPI,
# and the ring (MPIGPU_LMT=ring, both ranks on the one GPU) against both staging baselines.
# .device/bin: ../shared/device-bundle of this build; .device/old: mpigpu-sweep of c6a9150.
set -u
B=.device/bin; O=.device/old; P=/tmp/peers; mkdir -p $P
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
M="mpirun --allow-run-as-root -n 2 --bind-to core"
CUDA=/usr/local/cuda
{
  nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc
  lscpu | grep -E "Model name|Socket|Core|Thread|NUMA node"; mpirun --version | head -1
  mpicc -O2 -o $P/mpi_pingpong benchmarks/peers/mpi_pingpong.c && echo built mpi_pingpong
  mpicc -O2 -I$CUDA/include benchmarks/peers/mpi_staged.c -L$CUDA/lib64 -lcudart_static \
    -ldl -lpthread -lrt -o $P/mpi_staged && echo built mpi_staged
} > $OUT/env.txt 2>&1
# 1. GPU tests (each binary also runs its host cases).
{
  for t in transport_test api_p2p_test api_gpu_test device_copier_test cuda_ipc_test; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran"
  done
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
} > $OUT/tests.txt 2>&1
# 2. Host latency: old API, new API, Open MPI, alternated five times; the engine twice.
for rep in 1 2 3 4 5; do
  echo "## rep $rep old";  $R $O/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
  echo "## rep $rep new";  $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
  echo "## rep $rep ompi"; $M $P/mpi_pingpong 65536
done > $OUT/host-latency.txt 2>&1
for rep in 1 2; do echo "## engine $rep"; $R $B/pingpong H H 65536; done >> $OUT/host-latency.txt 2>&1
# 3. Host bandwidth from 64 KiB, window 64 (as mpi_pingpong).
{
  echo "## new"; $R $B/mpigpu-sweep bw H H -m 64K:64M -W 64 -i 20 -x 2 --no-limits
  echo "## ompi"; $M $P/mpi_pingpong $((64 << 20))
} > $OUT/host-bw.txt 2>&1
# 4. The ring and both staging baselines, D->D on the one GPU, window 8.
{
  echo "## ring"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2 -W 8
  echo "## staged over Open MPI"; $M $P/mpi_staged $((1 << 20)) $((64 << 20)) 8 10
  echo "## ring again"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2 -W 8 --no-peers
} > $OUT/ring.txt 2>&1
echo done
