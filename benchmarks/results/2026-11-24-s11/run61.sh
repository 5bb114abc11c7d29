#!/usr/bin/env bash
# Device run 61 (session 11): main with every branch of the session merged (the MPI layer, the
# collectives, datatypes, communicators, MPS, the pin cache, the sweep, the launcher's signal fix).
#   run61.sh t   every GPU test without MPS (incl. the new datatype, pin-cache and mpi.h device
#                tests), the MPS launcher test, the default sweep's wall time (the hang of run 60),
#                ten 2-rank /bin/true jobs (each must return)
#   run61.sh m   under a hand-started MPS daemon, default settings: the GPU tests again, every
#                collective on device buffers (1/2/3/5 ranks), mpi.h's device test, halo --check;
#                then mpi.h against mpigpu.h (lookup cost; ping-pong ABBA, host and D->D)
set -u
. benchmarks/results/device-steps.sh
device_env
runfiles() {  # launcher_mps_gpu_test finds mpigpurun and mps_rank under TEST_SRCDIR
  local rf=$PWD/.device/rf/mpigpu
  mkdir -p $rf/tools $rf/tests
  ln -sf $PWD/$B/mpigpurun $rf/tools/mpigpurun
  ln -sf $PWD/$B/mps_rank $rf/tests/mps_rank
  ln -sf $PWD/$B/launcher_probe $rf/tests/launcher_probe
  export TEST_SRCDIR=$PWD/.device/rf TEST_WORKSPACE=mpigpu
}
secs() { python3 -c "import time; print('%.2f' % (time.time() - $1))"; }
case "$1" in
t)
  device_info > $OUT/env.txt 2>&1
  {
    gpu_tests memcopy_test transport_stream_test transport_faults_test transport_test api_gpu_test \
      api_p2p_test api_request_test device_copier_test cuda_ipc_test pipeline_gpu_test \
      api_datatype_test api_datatype_ctor_test pin_cache_gpu_test
    echo "== tcp_datapath_test MPIGPU_SHM=0"; MPIGPU_SHM=0 timeout 120 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
    echo "== mpi_gpu_test (mpigpurun -n 2, no MPS: --mps off)"
    timeout 120 $B/mpigpurun -n 2 --mps off $B/mpi_gpu_test 2>&1 | tail -4
    runfiles
    echo "== launcher_mps_gpu_test"; timeout 120 $B/launcher_mps_gpu_test 2>&1 | grep -E "$GPU_TEST_LINES"
  } 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
  {
    for i in 1 2 3; do
      t0=$(python3 -c 'import time; print(time.time())')
      timeout 60 $B/mpigpu-sweep > $OUT/sweep-default-$i.txt 2>&1; echo "default sweep $i: exit $? in $(secs $t0) s"
    done
    for i in $(seq 1 10); do
      t0=$(python3 -c 'import time; print(time.time())')
      timeout 30 $B/mpigpurun -n 2 /bin/true; echo "mpigpurun -n 2 /bin/true: exit $? in $(secs $t0) s"
    done
    pgrep -a nvidia-cuda-mps | grep -v defunct || echo "no MPS process left"
  } > $OUT/launcher.txt 2>&1 ;;
m)
  mps_start
  {
    echo "MPS started by hand; default settings (the library detects MPS)"
    gpu_tests transport_test api_gpu_test api_p2p_test cuda_ipc_test api_datatype_ctor_test
    echo "== api_gpu_coll_test"; timeout 240 $B/api_gpu_coll_test 2>&1 | grep -E "$GPU_TEST_LINES|ranks"
    echo "== mpi_gpu_test (mpigpurun -n 2)"; timeout 60 $R $B/mpi_gpu_test 2>&1 | tail -3
    echo "== halo check"; timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
  } 2>&1 | grep -vE "$SKIPS" > $OUT/tests-mps.txt
  {
    echo "== lookup"; timeout 60 $B/mpi_overhead_bench lookup
    echo "== pingpong host"; timeout 120 $R $B/mpi_overhead_bench pingpong --rounds 6
    echo "== pingpong device"; timeout 120 $R $B/mpi_overhead_bench pingpong --device --rounds 6
  } > $OUT/mpi-overhead.txt 2>&1
  mps_stop ;;
esac
echo "run61 $1 done"
