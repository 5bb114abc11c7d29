#!/usr/bin/env bash
# Device run 55 (2026-11-24, session 9), two ranks on one GPU: the build after issue 16's end
# (instruction cuts, the Messenger interface, one packer) and issue 17's first part (the job's
# Bootstrap, the TCP netmod, per-peer routes). Every GPU test binary without and with MPS, the
# conformance variants (chan, socket, tcp = MPIGPU_SHM=0, two nodes), halo --check; D->D under
# MPS, pre-seam build (.device/old) vs this one, 4 alternating rounds; device buffers over TCP
# loopback (MPIGPU_SHM=0) vs host buffers on the same path.
# Rewritten after the run onto the shared steps of device-steps.sh (old_build, mps_start, ab,
# SKIPS, MPS): the commands are those that ran. The two-node variant's variable was then called
# MPIGPU_TEST_NODES; it is MULTIPROC_NODES now.
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
mps_start && echo "MPS started" >> $OUT/tests.txt
{
  for t in transport_faults_test transport_test api_gpu_test api_p2p_test; do
    echo "== $t (MPS, $MPS)"; env $MPS timeout 120 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
  conformance "$MPS"
  echo "== halo check (MPS, $MPS)"
  env $MPS timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
} 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
{
  ab "mps-bw-DD" "$MPS" bw D D -m 256K:2M -i 30 -x 5
  ab "mps-lat-DD" "$MPS" latency D D -m 1:64K -i 500 -x 50
} > $OUT/mps.txt 2>&1
{
  for kind in "H H" "D D" "H H" "D D"; do
    echo "== tcp pingpong $kind (MPIGPU_SHM=0, MPS)"
    env $MPS MPIGPU_SHM=0 timeout 60 $R $B/pingpong $kind $((64 << 20)) 2>&1 | grep -vE "^#"
  done
} > $OUT/tcp.txt 2>&1
mps_stop
echo done
