#!/usr/bin/env bash
# Device run 47 (2026-11-24, session 7), kind nvidia-h200: mpigpu-sweep after its device buffers,
# streams and peer-access switch went through DeviceScope: every pair on one GPU with -c's check.
set -u
. benchmarks/results/device-steps.sh
device_env
$R $B/mpigpu-sweep latency bw --all-pairs -m 1:1M -i 50 -x 5 -c > $OUT/sweep.txt 2>&1
echo "exit $?" >> $OUT/sweep.txt
echo done
