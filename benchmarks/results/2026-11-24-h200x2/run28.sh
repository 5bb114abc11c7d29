#!/usr/bin/env bash
# Device run 28 (2026-11-24), kind nvidia-h200-x2 (2x H200, NVLink, 32-core host): the final
# build's GPU tests on two GPUs, host latency before/after against Open MPI (five alternated
# repetitions), host bandwidth, the ring D->D between the two GPUs against both staging baselines
# (OSU window 64, and 8 as before), the pinned limits, and the halo exchange (weak, double).
# .device/bin: this build; .device/old: c6a9150's mpigpu-sweep.
set -u
B=.device/bin; O=.device/old; P=/tmp/peers; mkdir -p $P
NCCL_DIR=$(dirname "$(find /opt /usr -name libnccl.so.2 2>/dev/null | head -1)")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:$NCCL_DIR:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
M="mpirun --allow-run-as-root -n 2 --bind-to core"
CUDA=/usr/local/cuda
{
  nvidia-smi -L; nvidia-smi topo -m | head -4; nproc; lscpu | grep -E "Model name|NUMA node"
  echo "NCCL: $NCCL_DIR"
  mpicc -O2 -o $P/mpi_pingpong benchmarks/peers/mpi_pingpong.c && echo built mpi_pingpong
  mpicc -O2 -I$CUDA/include benchmarks/peers/mpi_staged.c -L$CUDA/lib64 -lcudart_static \
    -ldl -lpthread -lrt -o $P/mpi_staged && echo built mpi_staged
} > $OUT/env.txt 2>&1
{
  for t in transport_test api_p2p_test api_gpu_test device_copier_test cuda_ipc_test; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rank check"
  done
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
} > $OUT/tests.txt 2>&1
for rep in 1 2 3 4 5; do
  echo "## rep $rep old";  $R $O/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
  echo "## rep $rep new";  $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
  echo "## rep $rep ompi"; $M $P/mpi_pingpong 65536
done > $OUT/host-latency.txt 2>&1
{
  echo "## new"; $R $B/mpigpu-sweep bw H H -m 64K:64M -W 64 -i 20 -x 2 --no-limits
  echo "## ompi"; $M $P/mpi_pingpong $((64 << 20))
} > $OUT/host-bw.txt 2>&1
{
  echo "## pinned limits and mpigpu H<->D, pinned host buffers"
  $R $B/mpigpu-sweep bw --pairs HD,DH --host-mem pinned -m 16M:64M -i 10 -x 2 --no-peers
  echo "## ring, window 64"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2
  echo "## staged over Open MPI, window 64"; $M $P/mpi_staged $((1 << 20)) $((64 << 20)) 64 10
  echo "## ring, window 8"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2 -W 8
  echo "## staged over Open MPI, window 8"; $M $P/mpi_staged $((1 << 20)) $((64 << 20)) 8 10
} > $OUT/ring.txt 2>&1
{
  echo "## halo weak double"; timeout 240 $B/mpigpurun -n 2 $B/halo --mode all --weak --check \
    --type double --iters 200
} > $OUT/halo.txt 2>&1
echo done
