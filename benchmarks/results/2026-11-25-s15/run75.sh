#!/usr/bin/env bash
# (After the run, its inline test list moved into device-steps.sh as all_gpu_tests: same commands.)
# Session 15, device run 75 (one GPU, two ranks on it): after run 74, mremap of a whole own
# mapping keeps it listed. From the repository root with .device/bin carried; logs to $OUT.
#   part p: pin_cache_gpu_test with the defaults
#   part s: mpigpu-sweep bw H->D and D->H from pageable host buffers (posix_memalign, the
#           sweep's default), 1 MiB-256 MiB, with the defaults (pin cache on), then
#           MPIGPU_PIN_CACHE=0, then pinned host buffers (--host-mem pinned): the limit
#   part m: every GPU test under a hand-started MPS daemon, the defaults
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out75}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
part_p() {
  echo "== pin_cache_gpu_test (defaults)"
  timeout 240 $B/pin_cache_gpu_test 2>&1 | grep -vE "^\[ RUN|^\[       OK"
}
part_s() {
  local sw="$R $B/mpigpu-sweep bw --pairs HD,DH -m 1M:256M -i 10 -x 2 -W 8 --no-peers"
  echo "## pageable, defaults"; timeout 150 $sw
  echo "## pageable, MPIGPU_PIN_CACHE=0"; MPIGPU_PIN_CACHE=0 timeout 150 $sw
  echo "## pinned (--host-mem pinned)"; timeout 150 $sw --host-mem pinned
}
part_m() { mps_start; all_gpu_tests pin_cache_gpu_test 2>&1 | grep -vE "$SKIPS"; mps_stop; }
for p in "$@"; do
  s=$(date +%s); "part_$p" >"$D/part-$p.txt" 2>&1; echo "part $p: $(( $(date +%s) - s )) s" >>"$D/info.txt"
done
