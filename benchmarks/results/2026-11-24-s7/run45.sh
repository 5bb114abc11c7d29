#!/usr/bin/env bash
# Device run 45 (2026-11-24, session 7), kind nvidia-h200-x2: two H200s, one rank per GPU (the
# copier and the IPC copy on by default). New = main at 17e6695 (issue 15 and this session's
# issue-16 restructuring); old = bc64fca (before issue 15). GPU tests on two GPUs (their
# two-GPU forms: copier notify slots, peer copies); D->D latency old / new / new with
# MPIGPU_DEFAULT_STREAM_ORDER=0, two rounds interleaved; stream_order_bench --copier; halo --check.
set -u
. benchmarks/results/device-steps.sh
device_env
O=.device/old
RO="$O/mpigpurun -n 2 --bind-to core"
device_info > $OUT/env.txt 2>&1
SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
gpu_tests transport_stream_test transport_test api_gpu_test device_copier_test memcopy_test \
  transport_faults_test 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
for round in 1 2; do
  echo "== round $round OLD D D"; $RO $O/mpigpu-sweep latency D D -m 1:64K -i 1000 -x 100
  echo "== round $round NEW D D"; $R $B/mpigpu-sweep latency D D -m 1:64K -i 1000 -x 100
  echo "== round $round NEWOFF D D (MPIGPU_DEFAULT_STREAM_ORDER=0)"
  MPIGPU_DEFAULT_STREAM_ORDER=0 $R $B/mpigpu-sweep latency D D -m 1:64K -i 1000 -x 100
done > $OUT/lat-dd.txt 2>&1
$B/stream_order_bench --copier > $OUT/stream-order.txt 2>&1
{ echo "== halo check"; timeout 100 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4; } >> $OUT/tests.txt
echo done
