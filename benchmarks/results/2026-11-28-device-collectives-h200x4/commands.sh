#!/usr/bin/env bash
# The commands behind this folder, run from the repository root on the GPU machine with
# gpu-bundle/ unpacked (benchmarks/device/build.sh //tests:coll_device_reduce_test
# //benchmarks:coll_bench //docs/examples:ping //tests:perf_test). Output under $OUT.
set -u
source benchmarks/device/steps.sh
device_env
D=${OUT:-/tmp/mpigpu-out}; mkdir -p "$D"
{ device_info; date -u; uptime; cat "$B/COMMIT"; } >"$D/info.txt" 2>&1
n=$(nvidia-smi -L | wc -l)
step() { local name=$1; shift; local s=$(date +%s.%N); "$@" >"$D/$name.txt" 2>&1; echo "$name rc=$? $(echo "$(date +%s.%N) - $s" | bc) s" >>"$D/info.txt"; }
cb() { timeout 120 $B/mpigpurun -n "$1" --bind-to core $B/coll_bench "${@:2}"; }
step reduce-test timeout 240 $B/coll_device_reduce_test
step gpu-coll-test timeout 240 $B/api_gpu_coll_test
step ping timeout 60 $R $B/ping
for np in 2 4; do
  [ "$np" -le "$n" ] || continue
  step phases-$np cb $np -d cuda -m 8:256K --coll allgather,alltoall --phases -c -i 200 -x 20
  step phases-idle50-$np env MPIGPU_GPU_COPIER_IDLE_US=50 bash -c "$(declare -f cb); B=$B cb $np -d cuda -m 8:256K --coll allgather,alltoall --phases -c -i 200 -x 20"
  step phases-nocopier-$np env MPIGPU_GPU_COPIER_MAX=0 bash -c "$(declare -f cb); B=$B cb $np -d cuda -m 8:256K --coll allgather,alltoall --phases -c -i 200 -x 20"
  step allreduce-$np cb $np -d cuda -m 8:64M --coll allreduce -c -i 20 -x 3 --csv "$D/allreduce-$np.csv"
  step colls-$np cb $np -d cuda -m 8:64M --coll bcast,allgather,alltoall,reduce_scatter -c -i 20 -x 3
done
step sweep-floors-dd env CUDA_VISIBLE_DEVICES=0,1 timeout 120 $R $B/mpigpu-sweep latency D D -m 1:64K
step sweep-floors-all timeout 180 $R $B/mpigpu-sweep latency --all-pairs -m 1:4K
step perf-test timeout 60 $B/perf_test
for i in 1 2; do step tcp-datapath-$i timeout 300 $B/tcp_datapath_test; done
echo done
