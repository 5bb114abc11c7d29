#!/usr/bin/env bash
# (After the run, its inline test list moved into device-steps.sh as all_gpu_tests: same commands.)
# Session 15, device run 74 (one GPU, two ranks on it): the pin cache on by default, registering
# whole own mappings only (memreg/alloc_hooks.h, memhooks.h's own-mapping table). From the
# repository root with .device/bin carried; logs to $OUT.
#   part p: pin_cache_gpu_test with the defaults (nothing set), pin_cache_off_gpu_test
#           (MPIGPU_PIN_CACHE=0), transport_test's ReusedPageableHostBuffers*, pincache_bench
#           local and ranks with the defaults, then MPIGPU_PIN_CACHE=0 (the pageable rate)
#   part t: every GPU test with the defaults (the pin cache on), no MPS
#   part m: the same under a hand-started MPS daemon
# Target (issue 20): nth use / pinned >= 80% from 1 MiB (pincache_bench local).
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out74}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
part_p() {
  echo "== pin_cache_gpu_test (defaults)"
  timeout 240 $B/pin_cache_gpu_test 2>&1 | grep -vE "^\[ RUN|^\[       OK"
  echo "== pin_cache_off_gpu_test (MPIGPU_PIN_CACHE=0)"
  MPIGPU_PIN_CACHE=0 timeout 60 $B/pin_cache_off_gpu_test 2>&1 | grep -vE "^\[ RUN"
  echo "== transport_test ReusedPageableHostBuffers*"
  timeout 240 $B/transport_test --gtest_filter='*ReusedPageable*' 2>&1 |
    grep -E "$GPU_TEST_LINES|pin cache|mismatch"
  echo "== pincache_bench local (defaults)"; timeout 200 $B/pincache_bench local
  echo "== pincache_bench local MPIGPU_PIN_CACHE=0"; MPIGPU_PIN_CACHE=0 timeout 200 $B/pincache_bench local
  echo "== pincache_bench ranks (defaults)"; timeout 200 $R $B/pincache_bench ranks
}
part_t() { all_gpu_tests 2>&1 | grep -vE "$SKIPS"; }
part_m() { mps_start; all_gpu_tests 2>&1 | grep -vE "$SKIPS"; mps_stop; }
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
