#!/usr/bin/env bash
# Session 14, device run 72 (one H200, no MPS): issue 16's host item on a quiet GPU machine: the
# pre-seam build 7eddb37 (.device/old) against main 8f39287 (.device/bin), host latency
# 1 B-64 KiB and bandwidth 64 KiB-16 MiB, alternating (ABBA, 4 rounds); logs to $OUT.
set -u
source benchmarks/results/device-steps.sh
device_env
D=${OUT:-/tmp/out72}; mkdir -p "$D"
{ device_info; date -u; uptime; } >"$D/info.txt" 2>&1
old_build
{
  ROUNDS=4 ab "lat-HH" "" latency H H -m 1:64K -i 5000 -x 500
  ROUNDS=4 ab "bw-HH" "" bw H H -m 64K:16M -i 100 -x 10
} >"$D/host.txt" 2>&1
