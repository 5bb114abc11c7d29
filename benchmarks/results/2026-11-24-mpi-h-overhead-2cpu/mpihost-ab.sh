#!/bin/bash
# The ping-pong A/B of mpihost.md: builds alternating old,new,new,old,... (n runs each), each run
#   mpigpurun -n 2 --bind-to core mpi_overhead_bench pingpong --rounds $ROUNDS
# (mpigpu.h and mpi.h interleaved ABBA inside the run, medians). $OLD and $NEW are folders
# holding each build's mpigpurun and mpi_overhead_bench (bazel build -c opt).
#   OLD=/tmp/old NEW=/tmp/new ROUNDS=6 mpihost-ab.sh OUTDIR 6; python3 mpihost-ab-table.py OUTDIR
out=${1:?output folder}; n=${2:-4}
mkdir -p "$out"
order=()
for ((i = 0; i < n; i++)); do if ((i % 2 == 0)); then order+=(old new); else order+=(new old); fi; done
k=0
for b in "${order[@]}"; do
  k=$((k + 1))
  if [ "$b" = old ]; then d=${OLD:?}; else d=${NEW:?}; fi
  echo "== run $k build $b $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/log.txt"
  "$d/mpigpurun" -n 2 --bind-to core "$d/mpi_overhead_bench" pingpong --rounds "${ROUNDS:-6}" \
    > "$out/run$k-$b.txt" 2>&1
done
