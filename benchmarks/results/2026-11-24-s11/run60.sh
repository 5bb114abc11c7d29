#!/usr/bin/env bash
# Device run 60 (session 11): the integration build wt-dev60 (main + wt-mps + wt-pincache + wt-sweep).
#   run60.sh a   mps tests, then the sweep's default and latency D D runs (timed)
#   run60.sh b   the sweep's --all-pairs run (timed), then the pin cache's tests and benchmark
#   run60.sh c   mps perf (D->D latency, halo --weak; mpigpurun's default vs --mps off) and issue 16's
#                A/B with the default-stream order off
set -u
S=.device/dev60/2026-11-24-s11
cp .device/dev60/fake_mps_control.sh tests/testdata/ 2>/dev/null
. benchmarks/results/device-steps.sh
device_env
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$line"; done; }
timed() {  # label, limit, sweep args
  local label=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout $limit $B/mpigpu-sweep "$@" --json $OUT/sweep/$label.json 2> $OUT/sweep/$label.err | stamp > $OUT/sweep/$label.txt
  echo "$label: mpigpu-sweep $* -> exit ${PIPESTATUS[0]}, $(( $(date +%s) - t0 )) s" | tee -a $OUT/sweep/times.txt
}
case "$1" in
a)
  mkdir -p $OUT/sweep $OUT/ab
  timed default 90
  timed latency-DD 90 latency D D
  old_build; export ROUNDS=4
  mps_start
  { ab "mps-lat-DD" "$MPS" latency D D -m 1:4K -i 1000 -x 100
    ab "mps-lat-DD-order0" "$MPS MPIGPU_DEFAULT_STREAM_ORDER=0" latency D D -m 1:4K -i 1000 -x 100; } > $OUT/ab/mps16.txt 2>&1
  mps_stop ;;
b)
  mkdir -p $OUT/sweep
  timed default 75
  timed all-pairs 330 latency bw --all-pairs -m 1:64M --progress
  pgrep -a nvidia-cuda-mps > $OUT/sweep/mps-left.txt 2>&1 ;;
p)
  mkdir -p $OUT/pin
  { for m in auto off; do
      echo "== mpigpurun -n 2 --mps $m /bin/true"; t0=$(date +%s.%N)
      timeout 40 $B/mpigpurun -n 2 --mps $m /bin/true; echo "rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s"
      pgrep -a nvidia-cuda-mps | grep -v defunct
    done
    echo "== mpigpu-sweep -m 1:64 (H H)"; t0=$(date +%s.%N)
    timeout 40 $B/mpigpu-sweep -m 1:64 > /dev/null; echo "rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s"
    pgrep -a nvidia-cuda-mps | grep -v defunct
    echo "== ps after"; ps -eo pid,ppid,stat,etime,cmd | grep -E 'mpigpu|mps' | grep -v grep
  } > $OUT/pin/mps-hang.txt 2>&1
  OUT=$OUT/pin timeout 300 bash $S/pincache-device.sh ;;
c)
  mkdir -p $OUT/mps $OUT/ab
  OUT=$OUT/mps timeout 400 bash $S/mps-device.sh perf
  old_build; export ROUNDS=4
  mps_start
  { ab "mps-lat-DD" "$MPS" latency D D -m 1:4K -i 1000 -x 100
    ab "mps-lat-DD-order0" "$MPS MPIGPU_DEFAULT_STREAM_ORDER=0" latency D D -m 1:4K -i 1000 -x 100; } > $OUT/ab/mps16.txt 2>&1
  mps_stop ;;
esac
echo "run60 $1 done"
