#!/usr/bin/env bash
# Device run 29 (2026-11-24), kind nvidia-h200-x2: the build after the review (eager delivery in
# one helper): GPU tests on two GPUs and host latency against Open MPI, five alternated reps.
set -u
B=.device/bin; P=/tmp/peers; mkdir -p $P
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
R="$B/mpigpurun -n 2 --bind-to core"
M="mpirun --allow-run-as-root -n 2 --bind-to core"
mpicc -O2 -o $P/mpi_pingpong benchmarks/peers/mpi_pingpong.c > $OUT/env.txt 2>&1
nvidia-smi -L >> $OUT/env.txt
{
  for t in transport_test api_p2p_test api_gpu_test; do
    echo "== $t"; timeout 180 $B/$t 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rank check"
  done
  echo "== transport_test MPIGPU_LMT=ring"
  MPIGPU_LMT=ring timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
  echo "== transport_test tiny fastboxes + 2 cells"
  MPIGPU_FASTBOX_SIZE=64 MPIGPU_CELLS_PER_RANK=2 MPIGPU_CELL_SIZE=4K MPIGPU_EAGER_LIMIT=4K \
    timeout 180 $B/transport_test 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
} > $OUT/tests.txt 2>&1
for rep in 1 2 3 4 5; do
  echo "## rep $rep new";  $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
  echo "## rep $rep ompi"; $M $P/mpi_pingpong 65536
done > $OUT/host-latency.txt 2>&1
echo done
