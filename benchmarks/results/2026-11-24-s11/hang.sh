#!/usr/bin/env bash
# Where the default sweep waits after its table (run 60b: exit 124 at 75 s, the table done at 1.5 s).
. benchmarks/results/device-steps.sh
device_env
probe() {  # label, command...
  local label=$1; shift
  echo "=== $label: $*"
  ( timeout 40 "$@" > /tmp/o.txt 2>&1; echo "rc=$?" ) &
  sleep 15
  ps -eo pid,ppid,stat,wchan:32,etime,cmd | grep -E 'mpigpu|mps' | grep -v -E 'grep|defunct'
  for p in $(pgrep -f 'mpigpu-sweep|mpigpurun|mps'); do
    echo "-- $p $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
    for t in /proc/$p/task/*; do echo "   $(cat $t/wchan 2>/dev/null) $(cat $t/comm)"; done | sort | uniq -c
    ls -l /proc/$p/fd 2>/dev/null | awk '{print $NF}' | sort | uniq -c | sort -rn | head -4
  done
  wait
  tail -2 /tmp/o.txt
}
probe "new default" $B/mpigpu-sweep
probe "new default, pin cache off" env MPIGPU_PIN_CACHE=0 $B/mpigpu-sweep
probe "old default" .device/old/mpigpu-sweep
