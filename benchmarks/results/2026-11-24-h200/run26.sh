#!/usr/bin/env bash
# Device run 26 (2026-11-24), kind nvidia-h200 (one H200, 16-core host): GPU tests of this build
# (pin cache included), host latency before/after against Open MPI, the ring against both staging
# baselines at the OSU window (64), the pinned limits, and pageable H<->D with and without the
# pin cache. .device/bin: ../shared/device-bundle of this build; .device/old: c6a9150's sweep.
set -u
B=.device/bin; O=.device/old; P=/tmp/peers; mkdir -p $P
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
M="mpirun --allow-run-as-root -n 2 --bind-to core"
CUDA=/usr/local/cuda
{
  nvidia-smi -L; nproc; lscpu | grep -E "Model name|NUMA node0"
  mpicc -O2 -o $P/mpi_pingpong benchmarks/peers/mpi_pingpong.c && echo built mpi_pingpong
  mpicc -O2 -I$CUDA/include benchmarks/peers/mpi_staged.c -L$CUDA/lib64 -lcudart_static \
    -ldl -lpthread -lrt -o $P/mpi_staged && echo built mpi_staged
} > $OUT/env.txt 2>&1
{
  for t in transport_test pin_cache_test pin_cache_gpu_test api_p2p_test api_gpu_test; do
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
  echo "## pinned limits and mpigpu H<->D, pinned host buffers"
  $R $B/mpigpu-sweep bw --pairs HD,DH --host-mem pinned -m 1M:64M -i 10 -x 2 --no-peers
  echo "## ring, window 64"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2
  echo "## staged over Open MPI, window 64"; $M $P/mpi_staged $((1 << 20)) $((64 << 20)) 64 10
  echo "## ring, window 64, GPU units >= 1M"
  MPIGPU_LMT=ring MPIGPU_LMT_UNIT_GPU_MIN=1M $R $B/mpigpu-sweep bw D D -m 1M:4M -i 10 -x 2 --no-peers
  echo "## ring, window 8"; MPIGPU_LMT=ring $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2 -W 8
  echo "## staged over Open MPI, window 8"; $M $P/mpi_staged $((1 << 20)) $((64 << 20)) 8 10
} > $OUT/ring.txt 2>&1
{
  for pc in 0 1; do
    echo "## pageable host buffers, MPIGPU_PIN_CACHE=$pc"
    MPIGPU_PIN_CACHE=$pc $R $B/mpigpu-sweep bw --pairs HD,DH -m 1M:256M -i 10 -x 2 -W 8 --no-peers
  done
  echo "## pin cache hit cost"; $B/pin_cache_bench 2>&1 | tail -8
} > $OUT/pageable.txt 2>&1
echo done
