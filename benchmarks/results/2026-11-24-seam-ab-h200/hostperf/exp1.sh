#!/usr/bin/env bash
# hostperf helper (the transport seam): old (7eddb37) vs new (main 17e9504) host sweeps, alternating.
set -u
H=gpu-bundle/hostperf
sw() { local l=$1; shift; timeout 90 $H/$l/mpigpurun -n 2 --bind-to core $H/$l/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]|rror"; }  # (run as made: also printed a wall time through bc, which the machine lacks)
nproc; lscpu | grep -E "Model name|Thread|Core|Socket|NUMA|MHz"; cat /sys/kernel/mm/transparent_hugepage/enabled; uptime; which perf valgrind strace bc
for l in old new; do echo "== binding+ctx $l"; timeout 60 $H/$l/mpigpurun -n 2 --bind-to core $H/$l/mpigpu-sweep bw H H -m 128K:128K -i 3000 -x 1 >/dev/null 2>&1 & sleep 2.5; nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader; for p in $(pgrep -f "$H/$l/mpigpu-sweep"); do echo "pid $p threads $(ls /proc/$p/task | wc -l) $(grep Cpus_allowed_list /proc/$p/status)"; done; wait; done
for r in 1 2 3; do for l in old new; do echo "== A $r $l"; sw $l bw H H -m 64K:16M -i 30 -x 5; done; done
for r in 1 2 3; do for l in new old; do echo "== A-rev-sleep $r $l"; sleep 2; sw $l bw H H -m 64K:1M -i 30 -x 5; done; done
for r in 1 2 3; do for l in old new; do echo "== B $r $l"; sw $l bw H H -m 128K:256K -i 300 -x 30; done; done
for r in 1 2; do for l in old new; do echo "== C $r $l"; sw $l latency H H -m 1:64K -i 500 -x 50; done; done
for r in 1 2; do for l in new old; do echo "== C-rev-sleep $r $l"; sleep 2; sw $l latency H H -m 1:64K -i 500 -x 50; done; done
for r in 1 2; do for l in old new; do echo "== D $r $l"; sw $l latency H H -m 1:1 -i 50000 -x 1000; sw $l latency H H -m 32K:32K -i 20000 -x 1000; done; done
echo done
