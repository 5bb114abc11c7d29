#!/usr/bin/env bash
# Session 12, mpi.h host overhead (helper mpihost). On the device, from the repository root, with
# $D/bin (this branch) and $D/old (main before the change) carried (D=.device/mpihost, beside
# the script, copied into the session checkout's ignored .device/ folder):
#   mpihost-device.sh parts     the lookup's parts: runtime vs driver queries (ns per call)
#   mpihost-device.sh pp B R    host ping-pong, mpi.h vs mpigpu.h interleaved ABBA, R rounds,
#                               with build B (bin|old)
#   mpihost-device.sh gpu       this branch on the GPU: mpi_buftype_test, mpi_gpu_test (2 ranks),
#                               the device ping-pong (D->D through both interfaces)
#   mpihost-device.sh ab R N    host ping-pong, builds alternating old,bin,bin,old,... R times each,
#                               N ABBA rounds of the two interfaces inside each run
set -u
D=${D:-.device/mpihost}
export LD_LIBRARY_PATH=$D/bin:${LD_LIBRARY_PATH:-}
case "$1" in
parts)
  nvidia-smi -L; nproc; uptime
  for b in old bin; do
    echo "== $b lookup"; timeout 60 $D/$b/mpi_overhead_bench lookup
  done
  echo "== bin parts"; timeout 60 $D/bin/mpi_overhead_bench parts ;;
pp)
  uptime
  timeout 200 $D/$2/mpigpurun -n 2 --bind-to core $D/$2/mpi_overhead_bench pingpong --rounds $3 ;;
gpu)
  echo "== mpi_buftype_test"; timeout 120 $D/bin/mpi_buftype_test 2>&1 | grep -E "^\[ |Failure|Expected|Which|skip"
  echo "== mpi_gpu_test"; timeout 120 $D/bin/mpigpurun -n 2 --bind-to core $D/bin/mpi_gpu_test 2>&1 | tail -4
  echo "== pingpong --device"
  timeout 200 $D/bin/mpigpurun -n 2 --bind-to core $D/bin/mpi_overhead_bench pingpong --device --rounds 2 ;;
ab)
  uptime
  for i in $(seq 1 $2); do
    for b in $([ $((i % 2)) = 1 ] && echo "old bin" || echo "bin old"); do
      echo "== round $i build $b"
      timeout 200 $D/$b/mpigpurun -n 2 --bind-to core $D/$b/mpi_overhead_bench pingpong --rounds ${3:-4}
    done
  done ;;
esac
