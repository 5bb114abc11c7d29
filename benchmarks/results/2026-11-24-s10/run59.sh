#!/usr/bin/env bash
# Device run 59 (2026-11-24, session 10), two ranks on one GPU: main at the session's end (every
# branch merged: PMIx, the TCP data path, remote launcher links, the registration cache, the
# ibverbs netmod, the host-path fix). `run59.sh tests`: every GPU test binary without and with
# MPS, the conformance variants, the TCP data-path tests, halo --check. `run59.sh perf`: issue 16's
# A/B against the pre-seam build (host sweep, MPS D->D latency; 6 ABBA rounds) and D->D vs H->H over TCP.
set -u
. benchmarks/results/device-steps.sh
device_env
old_build
conformance() {  # $1: extra environment
  for v in "MPIGPU_LMT=chan" "MPIGPU_CHANNEL=socket" "MPIGPU_SHM=0" "MULTIPROC_NODES=2"; do
    echo "== transport_test $v $1"; env $v $1 timeout 120 $B/transport_test 2>&1 | grep -E "$GPU_TEST_LINES|context"
  done
}
tcp_tests() {  # $1: extra environment
  echo "== tcp_datapath_test MPIGPU_SHM=0 $1"; env MPIGPU_SHM=0 $1 timeout 180 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
  echo "== tcp_datapath_test MPIGPU_SHM=0 MPIGPU_NET_SOCKBUF=16K $1"
  env MPIGPU_SHM=0 MPIGPU_NET_SOCKBUF=16K $1 timeout 180 $B/tcp_datapath_test 2>&1 | grep -E "$GPU_TEST_LINES"
}
case "${1:-tests}" in
tests)
  device_info > $OUT/env.txt 2>&1
  {
    gpu_tests memcopy_test transport_stream_test transport_faults_test transport_test api_gpu_test \
      api_p2p_test api_request_test device_copier_test cuda_ipc_test pipeline_gpu_test api_datatype_test
    conformance ""
    tcp_tests ""
    echo "== halo check"; timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
  } 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
  mps_start && echo "MPS started" >> $OUT/tests.txt
  {
    for t in transport_faults_test transport_test api_gpu_test api_p2p_test cuda_ipc_test; do
      echo "== $t (MPS, $MPS)"; env $MPS timeout 120 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|context"
    done
    conformance "$MPS"
    tcp_tests "$MPS"
    echo "== halo check (MPS, $MPS)"
    env $MPS timeout 60 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -3
  } 2>&1 | grep -vE "$SKIPS" >> $OUT/tests.txt
  mps_stop ;;
perf)
  export ROUNDS=6
  {
    ab "host-lat-HH" "" latency H H -m 1:64K -i 500 -x 50
    ab "host-bw-HH" "" bw H H -m 64K:16M -i 30 -x 5
  } > $OUT/host.txt 2>&1
  mps_start
  ab "mps-lat-DD" "$MPS" latency D D -m 1:64K -i 500 -x 50 > $OUT/mps.txt 2>&1
  python3 benchmarks/results/2026-11-24-s10/hostperf/ab_median.py $OUT/host.txt $OUT/mps.txt > $OUT/ab-medians.txt 2>&1
  for round in 1 2 3; do
    for kind in "H H" "D D"; do
      echo "== round $round tcp sweep bw $kind (MPIGPU_SHM=0, MPS)"
      env $MPS MPIGPU_SHM=0 timeout 90 $R $B/mpigpu-sweep bw $kind -m 1M:64M -i 10 -x 2 2>&1 | grep -E "^[0-9]"
    done
  done > $OUT/tcp.txt 2>&1
  mps_stop ;;
esac
echo done
