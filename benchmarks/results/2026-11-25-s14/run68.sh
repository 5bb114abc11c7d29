#!/usr/bin/env bash
# Session 14's first device run (one GPU, 2026-11-25). From the repository root with .device/bin
# (bundle of main) and .device/old (pre-seam 7eddb37: mpigpurun, mpigpu-sweep) carried; logs to $OUT.
#   part s: what GPU-side ordering of device sends would cost (issue 20): stream_order_bench
#           without MPS, then under MPS with the resident copier running (--copier)
#   part t: the GPU paths that now find driver entry points through memcopy/driver_entry.h
#           (transport_test: CUDA IPC; ib_dmabuf_gpu_test; mpi_buftype_test)
#   part p: issue 19: D->D ping-pong through mpigpu.h and mpi.h under MPS, 1 B-16 MiB (one run)
#   part o: issue 16: pre-seam 7eddb37 vs main under MPS, D->D latency and bandwidth (ABBA)
set -u
source benchmarks/results/device-steps.sh
device_env
O=${OUT:-/tmp/out68}; mkdir -p "$O"
{ device_info; date -u; uptime; } >"$O/info.txt" 2>&1
part_s() {
  timeout 60 $B/stream_order_bench 2>&1
  mps_start
  echo "== under MPS, --copier"
  timeout 60 $B/stream_order_bench --copier 2>&1
  mps_stop
}
part_t() {
  gpu_tests transport_test ib_dmabuf_gpu_test mpi_buftype_test
}
part_p() {
  mps_start
  env $MPS timeout 150 $R $B/mpi_overhead_bench pingpong --device --rounds 3 2>&1 | tail -16
  mps_stop
}
part_o() {
  old_build
  mps_start
  ROUNDS=2 ab "mps-lat-DD" "$MPS" latency D D -m 1:64K -i 1000 -x 100
  ROUNDS=2 ab "mps-bw-DD" "$MPS" bw D D -m 256K:4M -i 40 -x 5
  ROUNDS=2 ab "mps-lat-DD-order0" "$MPS MPIGPU_DEFAULT_STREAM_ORDER=0" latency D D -m 1:4K -i 1000 -x 100
  mps_stop
}
for p in "$@"; do "part_$p" >"$O/part-$p.txt" 2>&1; done
