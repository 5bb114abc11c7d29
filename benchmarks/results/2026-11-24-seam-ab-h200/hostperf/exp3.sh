#!/usr/bin/env bash
# hostperf helper (the transport seam), round 3: what picks the fast or slow mode of plain CMA copies
# (128K-1M host bandwidth): pinned host buffers, and cooperative copies from 128K.
set -u
H=gpu-bundle/hostperf
sw() { local l=$1; shift; timeout 60 $H/$l/mpigpurun -n 2 --bind-to core $H/$l/mpigpu-sweep "$@" 2>&1 | grep -E "^[0-9]|rror"; }
for r in 1 2 3 4 5 6; do
  echo "== Q default $r"; sw new bw H H -m 128K:1M -i 100 -x 10
  echo "== Q pinned $r"; sw new --host-mem pinned bw H H -m 128K:1M -i 100 -x 10
  echo "== Q chunk64K new $r"; MPIGPU_CMA_CHUNK=64K sw new bw H H -m 128K:1M -i 100 -x 10
  echo "== Q chunk64K old $r"; MPIGPU_CMA_CHUNK=64K sw old bw H H -m 128K:1M -i 100 -x 10
done
echo done
