#!/usr/bin/env bash
# hostperf helper (the transport seam), round 2: more alternating pairs of `2026-11-24-tcp-datapath-h100/a`'s host commands (old 7eddb37
# vs new main 17e9504), and probes of the per-run bimodality of 128K-256K bandwidth.
set -u
H=gpu-bundle/hostperf
sw() { local l=$1; shift; timeout 90 $H/$l/mpigpurun -n 2 --bind-to core $H/$l/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]|rror"; }
uptime
for r in 1 2 3 4 5 6 7 8; do for l in old new; do echo "== BW $r $l"; sw $l bw H H -m 64K:16M -i 30 -x 5; done; done
for r in 1 2 3 4 5 6 7 8; do for l in new old; do echo "== LAT $r $l"; sw $l latency H H -m 1:64K -i 500 -x 50; done; done
for r in 1 2 3 4 5 6; do echo "== P default $r"; sw new bw H H -m 128K:256K -i 200 -x 20; echo "== P yield-off $r"; MPIGPU_YIELD=off sw new bw H H -m 128K:256K -i 200 -x 20; done
for r in 1 2 3 4 5 6; do echo "== P cores0,8 $r"; timeout 60 $H/new/mpigpurun -n 2 --bind-to none sh -c "exec taskset -c \$((MPIGPU_RANK*8)) $H/new/mpigpu-sweep bw H H -m 128K:256K -i 200 -x 20" 2>&1 | grep -E "^[0-9]|rror"; done
echo done
