#!/usr/bin/env bash
# Session 15, device run 76 (one GPU, two ranks on it): main after the review of the malloc
# wrappers (wt-allocreview) and the ibverbs cache on by default (wt-ibcache) were merged. From
# the repository root with .device/bin carried; logs to $OUT.
#   part p: pin_cache_gpu_test (defaults), pin_cache_off_gpu_test (MPIGPU_PIN_CACHE=0),
#           alloc_hooks_test and reg_cache_test with the defaults (a GPU present: tracking on
#           without the variable), pincache_bench local
#   part t: every GPU test with the defaults, no MPS
#   part m: the same under a hand-started MPS daemon
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out76}; mkdir -p "$D"
{ device_info; date -u; uptime; ls /sys/class/infiniband 2>&1; } >"$D/info.txt" 2>&1
part_p() {
  echo "== pin_cache_gpu_test (defaults)"
  timeout 240 $B/pin_cache_gpu_test 2>&1 | grep -vE "^\[ RUN|^\[       OK"
  echo "== pin_cache_off_gpu_test (MPIGPU_PIN_CACHE=0)"
  MPIGPU_PIN_CACHE=0 timeout 60 $B/pin_cache_off_gpu_test 2>&1 | grep -E "$GPU_TEST_LINES"
  gpu_tests alloc_hooks_test reg_cache_test
  echo "== pincache_bench local (defaults)"; timeout 200 $B/pincache_bench local
}
part_t() { all_gpu_tests 2>&1 | grep -vE "$SKIPS"; }
part_m() { mps_start; all_gpu_tests pin_cache_gpu_test 2>&1 | grep -vE "$SKIPS"; mps_stop; }
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
