#!/usr/bin/env bash
# The third set: D->D latency of the build before the back-end refactor and the collectives work
# (941dc8c, gpu-bundle/old) and of d105f89 (gpu-bundle/bin), ABBA rounds; the TCP data path
# test over loopback TCP (MPIGPU_SHM=0) on this 64-core host, twice. Output in $OUT/out.tgz.
set -u
source benchmarks/device/steps.sh
device_env
old_build
D=/tmp/mpigpu-out; rm -rf "$D"; mkdir -p "$D"
{ device_info; date -u; uptime; cat "$B/COMMIT" "$O/COMMIT"; } >"$D/info.txt" 2>&1
pack() { tar czf "$OUT/out.tgz" -C "$D" .; }
trap pack EXIT
export CUDA_VISIBLE_DEVICES=0,1
ROUNDS=4 ab latency-dd "" latency D D -m 1:16K -i 2000 -x 100 --no-peers >"$D/ab-latency-dd.txt" 2>&1
ROUNDS=2 ab latency-hh "" latency H H -m 1:4K -i 5000 -x 200 --no-peers >"$D/ab-latency-hh.txt" 2>&1
unset CUDA_VISIBLE_DEVICES
for i in 1 2; do MPIGPU_SHM=0 timeout 150 $B/tcp_datapath_test >"$D/tcp-datapath-$i.txt" 2>&1; echo "tcp-datapath-$i rc=$?" >>"$D/info.txt"; done
[ -x $B/api_win_gpu_test ] && { timeout 100 $B/api_win_gpu_test >"$D/win-gpu-test.txt" 2>&1; echo "win-gpu rc=$?" >>"$D/info.txt"; }
echo done
