#!/usr/bin/env bash
# Device run 57 (2026-11-24, session 10), two ranks on one GPU: main after the back-ends'
# building blocks moved into transport/lmt, the engine reading LmtCaps (device_buffers, strided),
# the cuda-ipc back-end recycling its per-request states (LmtOpPool), and the remote launcher
# links. Every GPU test binary without and with MPS, the conformance variants, halo --check;
# issue 16's A/B against the pre-seam build (.device/old): D->D latency and bandwidth under MPS
# and the host sweep (H->H latency and bandwidth, no MPS), 4 alternating rounds each.
set -u
. benchmarks/results/device-steps.sh
device_env
old_build
device_info > $OUT/env.txt 2>&1
conformance() {  # $1: extra environment
  for v in "MPIGPU_LMT=chan" "MPIGPU_CHANNEL=socket" "MPIGPU_SHM=0" "MULTIPROC_NODES=2"; do
    echo "== transport_test $v $1"; env $v $1 timeout 120 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
}
{
  gpu_tests memcopy_test transport_stream_test transport_faults_test transport_test api_gpu_test \
    api_p2p_test api_request_test device_copier_test cuda_ipc_test pipeline_gpu_test api_datatype_test
  conformance ""
  echo "== halo check"; timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
{
  ab "host-lat-HH" "" latency H H -m 1:64K -i 500 -x 50
  ab "host-bw-HH" "" bw H H -m 64K:16M -i 30 -x 5
} > $OUT/host.txt 2>&1
mps_start && echo "MPS started" >> $OUT/tests.txt
{
  for t in transport_faults_test transport_test api_gpu_test api_p2p_test cuda_ipc_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 120 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
  conformance "$MPS"
  echo "== halo check (MPS, $MPS)"
  env $MPS timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
{
  ab "mps-lat-DD" "$MPS" latency D D -m 1:64K -i 500 -x 50
  ab "mps-bw-DD" "$MPS" bw D D -m 256K:2M -i 30 -x 5
} > $OUT/mps.txt 2>&1
mps_stop
echo done
