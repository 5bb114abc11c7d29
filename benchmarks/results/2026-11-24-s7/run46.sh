#!/usr/bin/env bash
# Device run 46 (2026-11-24, session 7), kind nvidia-h200, two ranks on its one GPU: the final
# build after the review fixes (settings made on first use, probe watch, drain errors, link fd
# identity). GPU tests and halo --check, without MPS.
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
SKIPS="SKIPPED \] (Pairs|CopyTest|GpuCopy2D|DefaultStreamOrderTest.Without)"
{
  gpu_tests transport_stream_test transport_faults_test transport_test api_gpu_test api_p2p_test \
    api_request_test memcopy_test device_copier_test
  echo "== halo check"; timeout 100 $R $B/halo --mode all --check --type float --iters 50 2>&1 | tail -4
  echo "== sweep D D"; $R $B/mpigpu-sweep latency D D -m 1:4K -i 200 -x 20 2>&1 | tail -8
} 2>&1 | grep -vE "$SKIPS" > $OUT/tests.txt
echo done
