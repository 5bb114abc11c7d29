#!/usr/bin/env bash
# The second set of commands behind this folder (after the blocking collectives' copier
# release), from the repository root on the GPU machine with gpu-bundle/ unpacked
# (benchmarks/device/build.sh //tests:coll_device_reduce_test //benchmarks:coll_bench
# //docs/examples:ping //tests:perf_test //tests:api_win_test). Output packed into $OUT/out.tgz.
set -u
source benchmarks/device/steps.sh
device_env
D=/tmp/mpigpu-out; rm -rf "$D"; mkdir -p "$D"
{ device_info; date -u; uptime; cat "$B/COMMIT"; } >"$D/info.txt" 2>&1
step() { local name=$1 s=$SECONDS; shift; "$@" >"$D/$name.txt" 2>&1; echo "$name rc=$? $((SECONDS - s)) s" >>"$D/info.txt"; }
cb() { timeout 120 $B/mpigpurun -n "$1" --bind-to core $B/coll_bench "${@:2}"; }
pack() { tar czf "$OUT/out.tgz" -C "$D" .; }
trap pack EXIT
step gpu-coll-test timeout 120 $B/api_gpu_coll_test
step reduce-test timeout 120 $B/coll_device_reduce_test
for np in 2 4; do
  step sync-$np cb $np -d cuda -m 8:1M --coll allgather,alltoall,bcast,allreduce --sync-device -c -i 100 -x 10
  step phases-$np cb $np -d cuda -m 8:128K --coll allgather,alltoall --phases -c -i 100 -x 10
done
step tcp-datapath timeout 200 $B/tcp_datapath_test
step win-test timeout 90 $B/api_win_test
step sweep-floors-dd env CUDA_VISIBLE_DEVICES=0,1 timeout 90 $R $B/mpigpu-sweep latency D D -m 1:64K
step all-gpu-tests timeout 240 bash -c "source benchmarks/device/steps.sh; device_env; all_gpu_tests"
echo done
